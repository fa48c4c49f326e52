package staunch

import (
	"strings"
	"testing"
)

// The knob names a go-sql-driver DSN takes as they are come from the
// library (staunch_knob_name), so a knob added to the core needs no copy
// here: pool_name and timings were missing from the copy this replaced.
func Test_dsn_knob_names_are_the_librarys(t *testing.T) {
	knobs := staunchKnobs()
	for _, k := range []string{"max_size", "interpolate_params", "connect_attrs", "program_name", "pool_name", "timings", "monitor_password"} {
		if !knobs[k] {
			t.Errorf("%s is not among the library's knobs %v", k, knobs)
		}
	}
	cfg, _, err := parseDSN("u:pw@tcp(127.0.0.1:1)/db?pool_name=billing&timings=true&sql_mode=%27ANSI%27")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Knobs["pool_name"] != "billing" || cfg.Knobs["timings"] != "true" {
		t.Fatalf("knobs: %v", cfg.Knobs)
	}
	if cfg.Knobs["init_sql"] != "SET sql_mode='ANSI'" {
		t.Fatalf("a session variable: %q", cfg.Knobs["init_sql"])
	}
}

// Config.String redacts as the library's messages do (staunch_url_redact).
func Test_config_string_redacts_as_the_library(t *testing.T) {
	for url, want := range map[string]string{
		"mysql://app:s3cret@h:3306/db?monitor_password=s3cret&max_size=2": "mysql://app:<redacted>@h:3306/db?monitor_password=<redacted>&max_size=2",
		"mysql://app:s3/cr?et@h/db":                                       "mysql://app:<redacted>@h/db",
		"mysql://app@h/db":                                                "mysql://app@h/db",
		"mysql://app:s3\x00cret@h/db":                                     "<redacted>",
	} {
		got := Config{URL: url}.String()
		if !strings.Contains(got, "URL: \""+want+"\"") {
			t.Errorf("%q: %s", url, got)
		}
		if strings.Contains(got, "s3") {
			t.Errorf("%q: the password shows: %s", url, got)
		}
	}
}

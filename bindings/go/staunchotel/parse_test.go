package staunchotel

import (
	"math"
	"strings"
	"testing"
)

func TestParseTextReadsWhatTheLibraryWrites(t *testing.T) {
	text := "# HELP x y\n# TYPE x gauge\n" +
		`db_client_connection_count{db_client_connection_pool_name="a\"b\\c\nd",server_address="::1",server_port="3306",db_client_connection_state="idle"} 2` + "\n" +
		`db_client_connection_wait_time_seconds_bucket{db_client_connection_pool_name="p",le="1e-06"} 7` + "\n" +
		`db_client_connection_wait_time_seconds_bucket{db_client_connection_pool_name="p",le="+Inf"} 9` + "\n" +
		"plain 1.5\nnan NaN\n"
	s, err := parseText(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 5 {
		t.Fatalf("%d samples", len(s))
	}
	a := s[0].attributes()
	if v, _ := a.Value(keyPool); v.AsString() != "a\"b\\c\nd" {
		t.Errorf("pool name %q", v.AsString())
	}
	if v, _ := a.Value(keyPort); v.AsInt64() != 3306 {
		t.Errorf("port %v", v)
	}
	if s[0].value != 2 || s[1].le != "1e-06" || s[1].value != 7 || s[2].le != "+Inf" {
		t.Errorf("%+v", s[:3])
	}
	if s[3].name != "plain" || s[3].value != 1.5 || !math.IsNaN(s[4].value) {
		t.Errorf("%+v", s[3:])
	}
	for _, bad := range []string{"novalue", `x{a="b"} zz`, `x{a="b" 1`, `x{a} 1`, `x{a="b} 1`} {
		if _, err := parseText(bad); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

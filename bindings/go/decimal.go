package staunch

import (
	"database/sql/driver"
	"fmt"
	"math"
	"strconv"
)

// Decimal is an exact decimal number written as text, the way
// encoding/json's Number is: an optional sign, digits, and an optional
// point with digits after it ("-12.50", "+7", ".5", "3."), no exponent, at
// most 65 digits (leading zeros not counted) of which at most 38 after the
// point: what a MariaDB/MySQL DECIMAL holds.
//
// Bound as a parameter, a Decimal is a DECIMAL on the server (the C ABI's
// STAUNCH_PARAM_DECIMAL), exact in arithmetic, comparison and storage, both
// when the statement is prepared and with interpolateParams; SELECT ? of a
// Decimal gives a DECIMAL column. A Decimal that is not a decimal number is
// refused when the statement runs, with an error naming the argument, and
// nothing is sent. ParseDecimal checks one beforehand.
//
// A string bound to a DECIMAL column stays a string, as go-sql-driver/mysql
// sends it (exact when stored; in arithmetic the server reads a string as a
// double, with either driver): bind a Decimal where the value must stay
// exact in an expression (UPDATE t SET bal = bal + ?).
//
// A DECIMAL column scans exactly into a *Decimal, a *string or a *[]byte
// (never through a float); NULL into sql.Null[Decimal] or a **Decimal.
type Decimal string

// ParseDecimal gives s as a Decimal if it is a decimal number (see Decimal),
// else an error saying what is wrong.
func ParseDecimal(s string) (Decimal, error) {
	if err := checkDecimal(s); err != nil {
		return "", invalid("decimal", "%v", err)
	}
	return Decimal(s), nil
}

// The most digits a DECIMAL holds, and the most after the point
// (MariaDB; MySQL holds 30 after the point and refuses more itself). The
// same rule as the C ABI's STAUNCH_PARAM_DECIMAL, which checks it again.
const (
	decimalMaxDigits = 65
	decimalMaxScale  = 38
)

// checkDecimal: nil if s is a decimal number, else why not (quoting at
// most 40 bytes of s).
func checkDecimal(s string) error {
	shown := s
	if len(shown) > 40 {
		shown = shown[:40] + "..."
	}
	bad := func(why string) error {
		return fmt.Errorf("%q is not a decimal number (%s; expected [+-]digits[.digits])", shown, why)
	}
	body := s
	if body == "" {
		return bad("empty")
	}
	if body[0] == '-' || body[0] == '+' {
		body = body[1:]
	}
	intDigits, lead, frac, point := 0, true, 0, false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '.' && !point:
			point = true
		case c >= '0' && c <= '9':
			if point {
				frac++
			} else if c != '0' || !lead {
				lead = false
				intDigits++
			}
		default:
			r := []rune(body[i:])[0]
			return bad(fmt.Sprintf("%q is not a digit", r))
		}
	}
	if len(body) == 0 || body == "." {
		return bad("no digits")
	}
	if frac > decimalMaxScale {
		return bad(fmt.Sprintf("%d digits after the point; a DECIMAL keeps at most %d", frac, decimalMaxScale))
	}
	if n := intDigits + frac; n > decimalMaxDigits {
		return bad(fmt.Sprintf("%d digits; a DECIMAL holds at most %d", n, decimalMaxDigits))
	}
	return nil
}

// String is the number's text as it was given.
func (d Decimal) String() string { return string(d) }

// Value makes a Decimal usable with any database/sql driver: its text
// (which go-sql-driver/mysql, for one, sends as a string), or an error if
// it is not a decimal number. staunch's own driver binds it as a DECIMAL
// instead, without calling Value.
func (d Decimal) Value() (driver.Value, error) {
	if err := checkDecimal(string(d)); err != nil {
		return nil, err
	}
	return string(d), nil
}

// Scan reads a column's value exactly: DECIMAL and text as their digits
// (checked to be a decimal number), integers as theirs, a float as the
// shortest text that reads back as the same float. NULL is an error (scan
// into sql.Null[Decimal] or a **Decimal).
func (d *Decimal) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	case int64:
		s = strconv.FormatInt(v, 10)
	case uint64:
		s = strconv.FormatUint(v, 10)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("staunch.Decimal: %v is not a decimal number", v)
		}
		s = strconv.FormatFloat(v, 'f', -1, 64)
	case nil:
		return fmt.Errorf("staunch.Decimal: the value is NULL: scan into sql.Null[staunch.Decimal] or a **staunch.Decimal")
	default:
		return fmt.Errorf("staunch.Decimal: cannot scan a %T", src)
	}
	if err := checkDecimal(s); err != nil {
		return fmt.Errorf("staunch.Decimal: %v", err)
	}
	*d = Decimal(s)
	return nil
}

// Package gormstaunch is GORM's MySQL dialector (gorm.io/driver/mysql) over
// staunch: the same dialector, with the driver name "staunch" and an error
// translator that knows staunch's *MySQLError, so db.Config.TranslateError
// gives gorm.ErrDuplicatedKey and gorm.ErrForeignKeyViolated as it does
// with go-sql-driver.
//
//	db, err := gorm.Open(gormstaunch.Open("user:pass@tcp(host:3306)/db?parseTime=true&loc=Local"),
//		&gorm.Config{TranslateError: true})
//
// or over a pool of your own: gormstaunch.New(mysql.Config{Conn: staunch.OpenDB(pool)}).
package gormstaunch

import (
	"errors"

	staunch "github.com/staunch-db/staunch/bindings/go"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
)

// Dialector is gorm.io/driver/mysql's, with Translate knowing staunch.
type Dialector struct{ mysql.Dialector }

// Open is mysql.Open with the driver "staunch": dsn is a go-sql-driver DSN
// or a staunch URL (sql.Open("staunch", dsn)).
func Open(dsn string) gorm.Dialector {
	return New(mysql.Config{DSN: dsn})
}

// New is mysql.New with the driver "staunch" (unless cfg.Conn is given,
// which is then used as it is).
func New(cfg mysql.Config) gorm.Dialector {
	if cfg.DriverName == "" {
		cfg.DriverName = "staunch"
	}
	d := mysql.New(cfg).(*mysql.Dialector)
	return Dialector{*d}
}

// The error numbers gorm.io/driver/mysql translates (its error_translator.go).
var errCodes = map[uint16]error{
	1062: gorm.ErrDuplicatedKey,
	1451: gorm.ErrForeignKeyViolated,
	1452: gorm.ErrForeignKeyViolated,
}

// Translate turns staunch's server errors into GORM's, as gorm.io/driver/mysql
// does go-sql-driver's; anything else goes to its own Translate.
func (d Dialector) Translate(err error) error {
	var me *staunch.MySQLError
	if errors.As(err, &me) {
		if e, ok := errCodes[me.Number]; ok {
			return e
		}
		return err
	}
	return d.Dialector.Translate(err)
}

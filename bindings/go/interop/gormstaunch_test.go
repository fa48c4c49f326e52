package interop

import (
	"errors"
	"fmt"
	neturl "net/url"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/staunch-db/staunch/bindings/go/interop/gormstaunch"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// driverDSN is the test server as a go-sql-driver DSN.
func driverDSN(t *testing.T, params string) string {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	pass, _ := u.User.Password()
	return fmt.Sprintf("%s:%s@tcp(%s)%s?%s", u.User.Username(), pass, u.Host, u.Path, params)
}

type Maker struct {
	ID   uint64 `gorm:"primaryKey"`
	Code string `gorm:"size:20;uniqueIndex"`
}

type Part struct {
	ID      uint64 `gorm:"primaryKey"`
	MakerID uint64
	Maker   Maker
	Stock   *uint64 // a nullable BIGINT UNSIGNED
}

// GORM opened by DSN through gormstaunch: TranslateError gives GORM's errors,
// and map scans get go-sql-driver's types.
func Test_gormstaunch_translate_error_and_map_scan(t *testing.T) {
	db, err := gorm.Open(gormstaunch.Open(driverDSN(t, "charset=utf8mb4&parseTime=True&loc=Local")),
		&gorm.Config{Logger: logger.Discard, TranslateError: true})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	defer sqlDB.Close()
	if err := db.Migrator().DropTable(&Part{}, &Maker{}); err != nil {
		t.Fatal(err)
	}
	if err := db.AutoMigrate(&Maker{}, &Part{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&Maker{ID: 1, Code: "ACME"}).Error; err != nil {
		t.Fatal(err)
	}
	err = db.Create(&Maker{ID: 2, Code: "ACME"}).Error
	if !errors.Is(err, gorm.ErrDuplicatedKey) {
		t.Fatalf("duplicate key: %v, want gorm.ErrDuplicatedKey", err)
	}
	err = db.Omit("Maker").Create(&Part{ID: 1, MakerID: 99}).Error
	if !errors.Is(err, gorm.ErrForeignKeyViolated) {
		t.Fatalf("foreign key: %v, want gorm.ErrForeignKeyViolated", err)
	}
	five := uint64(5)
	if err := db.Omit("Maker").Create(&Part{ID: 2, MakerID: 1, Stock: &five}).Error; err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := db.Table("parts").Select("id, stock").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	// go-sql-driver: a nullable BIGINT UNSIGNED scans as sql.NullInt64, so
	// the map holds an int64; a NOT NULL one as uint64.
	if len(rows) != 1 || fmt.Sprintf("%T %T", rows[0]["stock"], rows[0]["id"]) != "int64 uint64" {
		t.Fatalf("map scan: %#v", rows)
	}
}

// sqlx over sql.Open("staunch", dsn), as a go-sql-driver user would write it.
func Test_sqlx_by_dsn(t *testing.T) {
	db, err := sqlx.Open("staunch", driverDSN(t, "parseTime=true"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db = sqlx.NewDb(db.DB, "mysql") // sqlx's bind type for MySQL
	var got []struct {
		N uint64 `db:"n"`
		S string `db:"s"`
	}
	if err := db.Select(&got, "SELECT seq AS n, CONCAT('x', seq) AS s FROM seq_1_to_3 WHERE seq > ?", 1); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[{2 x2} {3 x3}]" {
		t.Fatalf("%v", got)
	}
}

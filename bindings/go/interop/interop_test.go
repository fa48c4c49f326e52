// Package interop checks that sqlx and GORM (gorm.io/driver/mysql over an
// existing *sql.DB) run unchanged on staunch.OpenDB. A module of its own, so
// that the binding's module needs no third-party dependency.
package interop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	staunch "github.com/staunch-db/staunch/bindings/go"
	"github.com/staunch-db/staunch/bindings/go/internal/testkit"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

var url string

func TestMain(m *testing.M) {
	kit, err := testkit.Start("server")
	if err != nil {
		fmt.Fprintln(os.Stderr, "TestMain:", err)
		os.Exit(1)
	}
	url = kit.Ready.URL
	code := m.Run()
	kit.Stop()
	os.Exit(code)
}

func openPool(t *testing.T) *staunch.Pool {
	p, err := staunch.New(context.Background(), testkit.WithKnobs(url, "max_size=4"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

type person struct {
	ID    int64     `db:"id"`
	Name  string    `db:"name"`
	Email *string   `db:"email"`
	Born  time.Time `db:"born"`
}

func Test_sqlx_on_staunch(t *testing.T) {
	p := openPool(t)
	db := sqlx.NewDb(staunch.OpenDB(p), "mysql")
	defer db.Close()
	db.MustExec("CREATE OR REPLACE TABLE sqlx_people (id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50) NOT NULL, email VARCHAR(80) NULL, born DATE NOT NULL)")
	born := time.Date(1990, 5, 17, 0, 0, 0, 0, time.UTC)
	mail := "ada@example.com"
	res, err := db.NamedExec("INSERT INTO sqlx_people (name, email, born) VALUES (:name, :email, :born)",
		[]person{{Name: "Ada", Email: &mail, Born: born}, {Name: "Bob", Born: born}})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 2 {
		t.Fatalf("rows affected %d", n)
	}
	var people []person
	if err := db.Select(&people, "SELECT * FROM sqlx_people ORDER BY id"); err != nil {
		t.Fatal(err)
	}
	if len(people) != 2 || people[0].Name != "Ada" || *people[0].Email != mail || people[1].Email != nil || !people[1].Born.Equal(born) {
		t.Fatalf("%+v", people)
	}
	var one person
	q, args, err := sqlx.In("SELECT * FROM sqlx_people WHERE name IN (?)", []string{"Bob"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&one, db.Rebind(q), args...); err != nil || one.Name != "Bob" {
		t.Fatalf("%+v %v", one, err)
	}
	if s := p.Stat(); s.InUse != 0 {
		t.Fatalf("%d connections still in use", s.InUse)
	}
}

type Product struct {
	ID    uint `gorm:"primaryKey"`
	Code  string
	Price uint
	Note  *string
}

func Test_gorm_on_staunch(t *testing.T) {
	p := openPool(t)
	sqlDB := staunch.OpenDB(p)
	defer sqlDB.Close()
	db, err := gorm.Open(mysql.New(mysql.Config{Conn: sqlDB}), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrator().DropTable(&Product{}); err != nil {
		t.Fatal(err)
	}
	if err := db.AutoMigrate(&Product{}); err != nil {
		t.Fatal(err)
	}
	if err := db.AutoMigrate(&Product{}); err != nil { // again: reads the columns' types back
		t.Fatal(err)
	}
	if err := db.Create(&Product{Code: "D42", Price: 100}).Error; err != nil {
		t.Fatal(err)
	}
	var prod Product
	if err := db.First(&prod, "code = ?", "D42").Error; err != nil || prod.Price != 100 || prod.Note != nil {
		t.Fatalf("%+v %v", prod, err)
	}
	if err := db.Model(&prod).Update("Price", 200).Error; err != nil {
		t.Fatal(err)
	}
	err = db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&Product{Code: "ROLLED", Price: 1}).Error; err != nil {
			return err
		}
		return errors.New("roll back")
	})
	if err == nil {
		t.Fatal("the transaction did not fail")
	}
	var n int64
	if err := db.Model(&Product{}).Where("code = ?", "ROLLED").Count(&n).Error; err != nil || n != 0 {
		t.Fatalf("rolled-back rows: %d %v", n, err)
	}
	var again Product // not prod: Update already set its Price to 200
	if err := db.First(&again, prod.ID).Error; err != nil || again.Price != 200 {
		t.Fatalf("price %d %v", again.Price, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := db.WithContext(ctx).Exec("SELECT SLEEP(5)").Error; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a deadline through GORM: %v", err)
	}
	if s := p.Stat(); s.InUse != 0 {
		t.Fatalf("%d connections still in use", s.InUse)
	}
}

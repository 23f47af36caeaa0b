package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// PostgresEnv names a variable holding the URL of a PostgreSQL server the tests may use (a
// database per test is created in it). Without it, StartPostgres starts a server of its own.
const PostgresEnv = "INFERBENCH_TEST_POSTGRES"

// pgBinDirs are where Debian and other distributions put initdb and pg_ctl.
var pgBinDirs = []string{"/usr/lib/postgresql/*/bin", "/usr/local/pgsql/bin", "/usr/pgsql-*/bin"}

func findPGBin(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, g := range pgBinDirs {
		m, _ := filepath.Glob(filepath.Join(g, name))
		if len(m) > 0 {
			return m[len(m)-1]
		}
	}
	return ""
}

// Postgres is a throw-away PostgreSQL server.
type Postgres struct {
	URL string // the server's admin database ("postgres")
	n   atomic.Int64
}

// StartPostgres starts a PostgreSQL server in a temporary directory for the test (initdb and
// pg_ctl, run as the "postgres" or "nobody" user when the test runs as root), stopped when the
// test ends. It skips the test, with the reason, when the binaries are absent. With
// INFERBENCH_TEST_POSTGRES set, that server is used instead.
func StartPostgres(t *testing.T) *Postgres {
	t.Helper()
	if u := os.Getenv(PostgresEnv); u != "" {
		return &Postgres{URL: u}
	}
	initdb, pgctl := findPGBin("initdb"), findPGBin("pg_ctl")
	if initdb == "" || pgctl == "" {
		t.Skip("PostgreSQL binaries (initdb, pg_ctl) not found: apt-get install postgresql, or set " + PostgresEnv)
	}
	dir, err := os.MkdirTemp("", "inferbench-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	runAs := ""
	if os.Geteuid() == 0 {
		for _, name := range []string{"postgres", "nobody"} {
			if u, err := user.Lookup(name); err == nil {
				uid, _ := strconv.Atoi(u.Uid)
				gid, _ := strconv.Atoi(u.Gid)
				if err := os.Chown(dir, uid, gid); err != nil {
					t.Fatal(err)
				}
				runAs = name
				break
			}
		}
		if runAs == "" {
			t.Skip("running as root and no postgres or nobody user to run PostgreSQL as")
		}
	}
	command := func(name string, args ...string) *exec.Cmd {
		if runAs != "" {
			return exec.Command("runuser", append([]string{"-u", runAs, "--", name}, args...)...)
		}
		return exec.Command(name, args...)
	}
	data := filepath.Join(dir, "data")
	if out, err := command(initdb, "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8").CombinedOutput(); err != nil {
		t.Skipf("initdb failed, PostgreSQL tests skipped: %v\n%s", err, out)
	}
	port := freePort(t)
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=50", port, dir)
	if out, err := command(pgctl, "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	t.Cleanup(func() {
		_ = command(pgctl, "-D", data, "-m", "immediate", "-w", "stop").Run()
	})
	return &Postgres{URL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)}
}

// NewDatabase creates an empty database on the server and returns its URL.
func (p *Postgres) NewDatabase(t *testing.T) string {
	t.Helper()
	db, err := sql.Open("pgx", p.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := fmt.Sprintf("ib_%d_%d", time.Now().UnixNano()%1e9, p.n.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	base, query, _ := strings.Cut(p.URL, "?")
	base = base[:strings.LastIndex(base, "/")+1] + name
	if query != "" {
		base += "?" + query
	}
	return base
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

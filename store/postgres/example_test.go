package postgres_test

import (
	"context"
	"log"
	"os"

	"github.com/inferbench/inferbench/store"
	_ "github.com/inferbench/inferbench/store/postgres"
)

// Importing the package registers it with store.Open for the schemes postgres: and postgresql:,
// which connects to a PostgreSQL database and migrates its schema (under an advisory lock, so
// several CI jobs may open a fresh database at once); a program usually opens whatever
// INFERBENCH_STORE names. This example needs a server, so it is compiled but not run.
func Example() {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Params{URL: os.Getenv(store.EnvVar)}) // postgres://user:pass@host/db
	if err != nil {
		log.Fatal(err) // the error names the server by host and port, never its password
	}
	defer st.Close()

	b, err := st.Baseline(ctx, "main")
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("baseline main is run %s", b.RunID)
}

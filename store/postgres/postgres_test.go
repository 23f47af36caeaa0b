package postgres_test

import (
	"testing"

	"github.com/inferbench/inferbench/internal/testkit/storetest"
	"github.com/inferbench/inferbench/store"
	_ "github.com/inferbench/inferbench/store/postgres"
)

func TestConformance(t *testing.T) {
	pg := storetest.StartPostgres(t)
	storetest.Run(t, func(t *testing.T) store.Params {
		return store.Params{URL: pg.NewDatabase(t)}
	})
}

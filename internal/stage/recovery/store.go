package recovery

import "github.com/inferbench/inferbench/store"

// StoreLocation is where a run is recorded: loc, else $INFERBENCH_STORE (read with lookup), else
// "" (the default file under the working directory).
func StoreLocation(loc string, lookup func(key string) (string, bool)) string {
	if loc != "" {
		return loc
	}
	u, _ := lookup(store.EnvVar)
	return u
}

// StoreLabel names the store at loc for people (`inferbench serve` prints it): its location with
// any password redacted, the default SQLite file's path under dir (the working directory) when
// none is set.
func StoreLabel(loc string, lookup func(key string) (string, bool), dir string) string {
	url := StoreLocation(loc, lookup)
	if url == "" {
		url = store.SQLitePath("", dir)
	}
	return store.Redact(url)
}

// Package atomicfile writes files through a temporary file and a rename, so that a reader never
// sees a half-written file and a crash leaves the previous version: run.json, summary.csv and
// the other files of a run folder, and the reports the commands write.
package atomicfile

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
)

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write writes to path atomically what write writes, through a buffer (run.json is encoded
// straight into its file: a merged run's is hundreds of MB). The file is readable by all (0644).
func Write(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	werr := write(bw)
	if werr == nil {
		werr = bw.Flush()
	}
	perr := f.Chmod(0o644) // CreateTemp makes 0600; results are meant to be shared
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, perr, serr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

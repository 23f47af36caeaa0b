package readall

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Limits of the files inferbench reads whole, by what they hold (docs/reliability.md, "Bounded
// inputs"). A larger file is refused before it is read.
const (
	// ConfigLimit bounds a small configuration file: thresholds, budgets, alert rules.
	ConfigLimit = 4 << 20
	// RunLimit bounds a run.json, its journal and a file of another tool's results given to
	// import (a merged run's run.json is hundreds of MB).
	RunLimit = 4 << 30
)

// Errors of Open and File, wrapped with the path: errors.Is tells them.
var (
	ErrNotRegular = errors.New("not a regular file: only regular files are read")
	ErrTooLarge   = errors.New("over the limit for this file")
)

// Open opens path for reading when it is a regular file. A named pipe, a device, a socket or a
// directory is refused at once with an error naming the path and what it is: reading /dev/zero
// never ends, and opening a named pipe blocks until something writes to it.
func Open(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	// Non-blocking, in case path became a named pipe after the Stat: the open does not wait
	// for a writer, and the check below refuses it. It changes nothing for a regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = regular(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ErrOutside is the error of OpenIn for a name that leads outside its folder.
var ErrOutside = errors.New("leads outside the folder it belongs to")

// OpenIn opens name, a path relative to dir, for reading when it is a regular file inside dir:
// an absolute name, one with "..", or one a symbolic link leads out of dir is refused with an
// error naming dir's path to it and wrapping ErrOutside (a run folder downloaded from CI may
// carry "../../victim" or a link to /dev/zero in its run.json); what is not a regular file as
// Open does. The open does not follow anything out of dir (os.Root), and does not block on a
// named pipe.
func OpenIn(dir, name string) (*os.File, error) {
	full := dir + string(filepath.Separator) + name // not cleaned: the name as given
	if !filepath.IsLocal(name) {
		return nil, fmt.Errorf("%s: %w", full, ErrOutside)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.OpenFile(name, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		// os.Root refuses a path a link leads out of the root ("path escapes from parent").
		if _, lerr := root.Lstat(name); lerr == nil {
			if _, serr := root.Stat(name); serr != nil && !errors.Is(serr, fs.ErrNotExist) {
				return nil, fmt.Errorf("%s: %w (a symbolic link)", full, ErrOutside)
			}
		}
		return nil, fmt.Errorf("%s: %w", full, err)
	}
	fi, err := f.Stat()
	if err == nil {
		err = regular(full, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// regular returns an error when fi is not a regular file.
func regular(path string, fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a device"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	}
	return fmt.Errorf("%s is %s, %w", path, what, ErrNotRegular)
}

// File reads the regular file path (see Open) whole when it holds at most limit bytes; a larger
// one is refused before it is read, with an error naming the path and the limit.
func File(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, overLimit(path, limit)
	}
	// One byte more than its size, so the read sees the end without growing the buffer; the
	// limit holds for a file that grows while it is read.
	data, err := Into(io.LimitReader(f, limit+1), make([]byte, 0, fi.Size()+1), int(limit), path)
	if err != nil {
		if int64(len(data)) > limit {
			return nil, overLimit(path, limit)
		}
		return nil, err
	}
	return data, nil
}

func overLimit(path string, limit int64) error {
	return fmt.Errorf("%s is over the limit of %d bytes for this file: %w", path, limit, ErrTooLarge)
}

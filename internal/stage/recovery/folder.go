package recovery

import (
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/finite"
	"github.com/inferbench/inferbench/result"
)

// Files a run's render stage adds to its folder, beside result's run.json, summary.csv and run.log;
// ab's --baseline-ref run writes them too, and the commands that read a recorded run find them.
const (
	ReportFile          = "report.html"  // every run, unless run.Options.NoHTMLReport
	CompareJSONFile     = "compare.json" // when compared with a baseline or budgets were checked
	CompareMarkdownFile = "compare.md"   // the same, as markdown
)

// NewDir creates a folder for a new run under root, named by a new run id (result.NewID), and
// returns its path: the id is the folder's name.
func NewDir(root string, t time.Time) (string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("output dir %s: %w", root, err)
	}
	for {
		dir := filepath.Join(root, result.NewID(t))
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("output dir %s: %w", dir, err)
		}
	}
}

// LinkLatest points root/latest at dir (a relative symlink, replaced atomically). Runs that
// finish at once into one root (CI jobs sharing a folder) each link through a temporary name of
// their own, so none fails or leaves one behind, and latest ends at one of them. A latest that is
// not a symlink (a folder or file of the user's) is left as it is, and the error says so.
func LinkLatest(root, dir string) error {
	latest := filepath.Join(root, result.LatestLink)
	if fi, err := os.Lstat(latest); err == nil && fi.Mode()&os.ModeSymlink == 0 {
		return fmt.Errorf("%s is not a symlink: left as it is, not pointed at %s", latest, filepath.Base(dir))
	}
	var b [5]byte
	_, _ = rand.Read(b[:])
	tmp := filepath.Join(root, ".latest.tmp-"+strings.ToLower(base32.StdEncoding.EncodeToString(b[:])))
	if err := os.Symlink(filepath.Base(dir), tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, latest); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// Journal appends finished scenarios to a run folder's journal (result.JournalFile), which
// result.Load reads back into a run that never finished.
type Journal struct {
	f *os.File
}

// OpenJournal creates (or truncates) the journal in dir.
func OpenJournal(dir string) (*Journal, error) {
	f, err := os.OpenFile(filepath.Join(dir, result.JournalFile), os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &Journal{f: f}, nil
}

// Add appends one scenario as a line, in one write: a process killed in the middle leaves at most
// a last line cut short, which result.Load skips. It does not sync: the journal survives the death of
// the process (the SIGKILL or OOM it is for), not of the machine.
func (j *Journal) Add(sc *result.Scenario) error {
	line, err := finite.Marshal(sc)
	if err != nil {
		return fmt.Errorf("%s: %w", j.f.Name(), err)
	}
	if _, err := j.f.Write(append(line, '\n')); err != nil {
		return err
	}
	return nil
}

// Close closes the journal.
func (j *Journal) Close() error { return j.f.Close() }

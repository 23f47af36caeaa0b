package result

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/inferbench/inferbench/internal/base/readall"
)

// streamMin is the size from which a run.json is decoded as a stream, one scenario at a time
// (decodeStream), instead of read whole first: the file's bytes are then never all in memory
// beside the run they make. docs/measurements/reliability.md gives the memory each way costs.
const streamMin = 16 << 20

// batchBytes is about how much of a run.json's scenarios decodeStream decodes at once.
var batchBytes = 4 << 20 // a variable for tests

// errNotStreamable says a document is not in the form decodeStream reads; the caller reads it
// whole, which gives encoding/json's result or error.
var errNotStreamable = errors.New("not in the form read as a stream")

// decodeStream decodes a run document from r one batch of scenarios at a time: the top-level
// keys but "scenarios" are gathered and decoded together at the end; the scenarios are cut
// apart as they are read (lifter.skip, over a window of the stream) and each batch of about
// batchBytes is decoded as decodeRun decodes a run of those scenarios. It gives the run
// encoding/json gives for the same bytes, or errNotStreamable for a document it does not read the
// same way: a key twice, escaped, not ASCII or "scenarios" in another case (encoding/json
// merges, unescapes or folds them), "scenarios" not a list, a value encoding/json refuses,
// anything after the document. keys gets the top-level keys.
func decodeStream(r io.Reader, run *Run, keys map[string]bool) error {
	return decodeWith(r, run, keys, (*window).scenarios)
}

// decodeWith is decodeStream with the list of scenarios read by list.
func decodeWith(r io.Reader, run *Run, keys map[string]bool, list func(*window) ([]Scenario, bool)) error {
	w := &window{r: r}
	if !w.byte('{') {
		return errNotStreamable
	}
	head := []byte{'{'} // the other top-level keys, as an object
	var scenarios []Scenario
	for first := true; ; first = false {
		if w.peek() == '}' && first {
			w.off++
			break
		}
		keyRaw, ok := w.value(func(l *lifter) bool { return l.peek() == '"' && l.skipString() })
		if !ok {
			return errNotStreamable
		}
		keyRaw = append([]byte(nil), keyRaw...) // the window moves on
		key := string(keyRaw[1 : len(keyRaw)-1])
		if keys[key] || strings.ContainsAny(key, "\\") || strings.IndexFunc(key, func(r rune) bool { return r >= 0x80 }) >= 0 {
			return errNotStreamable
		}
		keys[key] = true
		if !w.byte(':') {
			return errNotStreamable
		}
		switch {
		case key == "scenarios":
			var ok bool
			if scenarios, ok = list(w); !ok {
				return errNotStreamable
			}
		case strings.EqualFold(key, "scenarios"):
			return errNotStreamable
		default:
			v, ok := w.value((*lifter).skip)
			if !ok {
				return errNotStreamable
			}
			if len(head) > 1 {
				head = append(head, ',')
			}
			head = append(append(append(head, keyRaw...), ':'), v...)
		}
		if w.peek() == ',' {
			w.off++
			continue
		}
		if !w.byte('}') {
			return errNotStreamable
		}
		break
	}
	if w.peek() != 0 || !w.eof {
		return errNotStreamable // something after the document: the whole reading decides
	}
	head = append(head, '}')
	if err := json.Unmarshal(head, run); err != nil {
		return errNotStreamable
	}
	run.Scenarios = scenarios
	return nil
}

// window is the part of a stream being read: buf[off:] is what is not read yet.
type window struct {
	r   io.Reader
	buf []byte
	off int
	eof bool
	err error
}

// fill reads more of the stream, keeping buf[off:]; false at its end.
func (w *window) fill() bool {
	if w.eof {
		return false
	}
	if w.off > 0 && w.off >= len(w.buf)/2 {
		w.buf = w.buf[:copy(w.buf, w.buf[w.off:])]
		w.off = 0
	}
	if len(w.buf) == cap(w.buf) {
		w.buf = append(w.buf, make([]byte, max(1<<20, len(w.buf)))...)[:len(w.buf)]
	}
	n, err := w.r.Read(w.buf[len(w.buf):cap(w.buf)])
	w.buf = w.buf[:len(w.buf)+n]
	if err != nil {
		w.eof, w.err = true, err
	}
	return n > 0 || !w.eof
}

// peek returns the next byte after white space, reading more when needed (0 at the end).
// afterElement reads what follows an element of a JSON array: ',' when another comes, ']' at the
// array's end, and 0, reading nothing, on anything else.
func (w *window) afterElement() byte {
	switch c := w.peek(); c {
	case ',', ']':
		w.off++
		return c
	}
	return 0
}

func (w *window) peek() byte {
	for {
		if w.off = skipSpace(w.buf, w.off); w.off < len(w.buf) {
			return w.buf[w.off]
		}
		if !w.fill() {
			return 0
		}
	}
}

// byte reads the byte c after white space.
func (w *window) byte(c byte) bool {
	if w.peek() != c {
		return false
	}
	w.off++
	return true
}

// value returns the bytes of the value read passes over (after white space), reading more of
// the stream until read finds its end inside the window. The bytes are valid until the next
// read of the window.
func (w *window) value(read func(*lifter) bool) ([]byte, bool) {
	if w.peek() == 0 {
		return nil, false
	}
	for {
		l := lifter{b: w.buf[w.off:]}
		// A value that ends with the window may go on in the stream (a number, a literal).
		if read(&l) && (l.i < len(l.b) || w.eof) {
			v := w.buf[w.off : w.off+l.i]
			w.off += l.i
			return v, true
		}
		if !w.fill() {
			return nil, false
		}
	}
}

// scenarios reads the list of scenarios, decoding them in batches of about batchBytes.
func (w *window) scenarios() ([]Scenario, bool) {
	if !w.byte('[') {
		return nil, false
	}
	out := []Scenario{}
	doc := []byte(`{"scenarios":[`)
	n := 0
	flush := func() bool {
		if n == 0 {
			return true
		}
		doc = append(doc, "]}"...)
		var one Run
		if err := decodeRun(doc, &one); err != nil || len(one.Scenarios) != n {
			return false
		}
		out = append(out, one.Scenarios...)
		doc, n = append(doc[:0], `{"scenarios":[`...), 0
		return true
	}
	if w.peek() == ']' {
		w.off++
		return out, true
	}
	for {
		v, ok := w.value((*lifter).skip)
		if !ok {
			return nil, false
		}
		if n > 0 {
			doc = append(doc, ',')
		}
		doc, n = append(doc, v...), n+1
		if len(doc) >= batchBytes && !flush() {
			return nil, false
		}
		switch w.afterElement() {
		case ']':
			return out, flush()
		case 0:
			return nil, false
		}
	}
}

// skipScenarios reads over the list of scenarios, checking that each is a JSON value, and
// decodes none of them.
func (w *window) skipScenarios() ([]Scenario, bool) {
	if !w.byte('[') {
		return nil, false
	}
	if w.peek() == ']' {
		w.off++
		return []Scenario{}, true
	}
	for {
		if _, ok := w.value((*lifter).skip); !ok {
			return nil, false
		}
		switch w.afterElement() {
		case ']':
			return []Scenario{}, true
		case 0:
			return nil, false
		}
	}
}

// ErrNotStreamable is the error of a Scanner that met a scenario it does not read as
// encoding/json reads it, or one Decode refuses: the file is to be read whole, which gives
// Decode's result or error.
var ErrNotStreamable = errNotStreamable

// Scanner reads a run.json for a caller that keeps the run's scenarios elsewhere (the store, on
// import), holding a batch of them at a time rather than the run, as bufio.Scanner reads
// tokens: Head is the run without its scenarios, Scan reads the next batch (about batchBytes of
// the file), Batch returns it and Err the error that ended the batches, nil at their end. The
// scenarios are those Load gives, checked as it checks them; on any error the file is to be
// read whole (ErrNotStreamable), which gives Load's error.
type Scanner struct {
	f     io.Closer
	w     *window
	head  *Run
	name  string
	doc   []byte
	batch []Scenario
	end   bool
	err   error
	// The journal AddJournal adds (path, bytes), the ids of the scenarios read, their tally.
	journal     string
	journalData []byte
	have        map[string]bool
	tally       Summary
}

// OpenScanner opens the run.json at path (name in messages) for a Scanner. It reads the whole
// file once first, to check its form and decode every key but the scenarios, which it skips:
// ok is false, and s nil, when the file is not one to read so (not in the form decodeStream
// reads, larger than 4 GiB, a header Decode refuses, or with asImport the JSON of
// another tool or without a schema): the caller reads it whole. err is an error opening the
// file. Close the Scanner when done.
func OpenScanner(path, name string, asImport bool) (s *Scanner, ok bool, err error) {
	f, err := readall.Open(path)
	if err != nil {
		return nil, true, err
	}
	if fi, err := f.Stat(); err != nil || fi.Size() > readall.RunLimit {
		f.Close()
		return nil, false, nil
	}
	var head Run
	keys := map[string]bool{}
	if decodeWith(bufio.NewReaderSize(f, 1<<20), &head, keys, (*window).skipScenarios) != nil ||
		(asImport && (keys["benchmarks"] || keys["results"] || !keys["schema"])) {
		f.Close()
		return nil, false, nil
	}
	h, err := check(&head, name)
	if err != nil { // Decode's error may be another, of a scenario: the whole reading says
		f.Close()
		return nil, false, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, true, err
	}
	s = &Scanner{f: f, w: &window{r: bufio.NewReaderSize(f, 1<<20)}, head: h, name: name}
	s.end = !s.toScenarios()
	return s, true, nil
}

// toScenarios moves the window to the first scenario; false when there is none (no list, or
// an empty one). The first reading found the document well formed.
func (s *Scanner) toScenarios() bool {
	w := s.w
	if !w.byte('{') {
		return false
	}
	for {
		keyRaw, ok := w.value(func(l *lifter) bool { return l.peek() == '"' && l.skipString() })
		if !ok || !w.byte(':') {
			return false
		}
		if string(keyRaw) == `"scenarios"` {
			if !w.byte('[') {
				return false
			}
			if w.peek() == ']' {
				return false
			}
			return true
		}
		if _, ok := w.value((*lifter).skip); !ok || !w.byte(',') {
			return false
		}
	}
}

// Head returns the run without its scenarios (checked as Decode checks a run; Partial when it
// did not finish).
func (s *Scanner) Head() *Run { return s.head }

// AddJournal makes the Scanner add, after the file's scenarios, the scenarios of the journal in
// dir that the file lacks, as AddJournal adds them to a run that never finished (a finished run
// is left as it is): they are the last batch, and once it is read Head's Summary counts them.
// Call it before Scan. A journal that does not read ends the batches with ErrNotStreamable (the
// whole reading gives AddJournal's error).
func (s *Scanner) AddJournal(dir string) error {
	path, data, err := readJournal(dir, s.head)
	if path == "" || err != nil {
		return err
	}
	s.journal, s.journalData, s.have = path, data, map[string]bool{}
	return nil
}

// journalBatch reads the journal's scenarios that the file lacked; false when there are none.
func (s *Scanner) journalBatch() bool {
	data := s.journalData
	if data == nil {
		return false
	}
	s.journalData = nil
	added, err := journalScenarios(s.journal, data, s.have)
	if err == nil && len(added) > 0 {
		err = (&Run{Scenarios: added}).CheckValues()
	}
	if err != nil {
		s.err = fmt.Errorf("%s: %w", s.journal, ErrNotStreamable)
		return false
	}
	if len(added) == 0 {
		return false
	}
	for i := range added {
		s.tally.count(&added[i])
	}
	s.tally.rate()
	s.head.Summary = s.tally
	s.batch = added
	return true
}

// Scan reads the next batch of scenarios; false at their end or on an error (Err).
func (s *Scanner) Scan() bool {
	s.batch = nil
	if s.err != nil {
		return false
	}
	if s.end {
		return s.journalBatch()
	}
	doc := append(s.doc[:0], `{"scenarios":[`...)
	n := 0
	for !s.end && (n == 0 || len(doc) < batchBytes) {
		v, ok := s.w.value((*lifter).skip)
		if !ok {
			s.err = fmt.Errorf("%s: %w", s.name, ErrNotStreamable)
			return false
		}
		if n > 0 {
			doc = append(doc, ',')
		}
		doc, n = append(doc, v...), n+1
		switch s.w.afterElement() {
		case ']':
			s.end = true
		case 0:
			s.err = fmt.Errorf("%s: %w", s.name, ErrNotStreamable)
			return false
		}
	}
	doc = append(doc, "]}"...)
	s.doc = doc
	var one Run
	// A batch that does not decode or check is the whole reading's to report: Decode's error
	// may be another, of a later scenario.
	if err := decodeRun(doc, &one); err != nil || len(one.Scenarios) != n || one.CheckValues() != nil {
		s.err = fmt.Errorf("%s: %w", s.name, ErrNotStreamable)
		return false
	}
	inertNames(&one)
	if s.have != nil {
		for i := range one.Scenarios {
			s.have[one.Scenarios[i].ID()] = true
			s.tally.count(&one.Scenarios[i])
		}
	}
	s.batch = one.Scenarios
	return true
}

// Batch returns the scenarios Scan read.
func (s *Scanner) Batch() []Scenario { return s.batch }

// Err returns the error that ended the batches, wrapping ErrNotStreamable (the file is to be
// read whole), or nil at their end.
func (s *Scanner) Err() error { return s.err }

// Close closes the file.
func (s *Scanner) Close() error { return s.f.Close() }

// loadStream decodes the run.json at path as a stream when it is at least streamMin bytes and
// in the form decodeStream reads, and checks it as Decode does; done is false when it was not
// (the caller reads the file whole). With asImport, a document holding the keys of another
// tool's JSON (benchmarks, results) or no schema is left to importData's detection.
func loadStream(path, name string, asImport bool) (r *Run, done bool, err error) {
	f, err := readall.Open(path)
	if err != nil {
		return nil, true, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() < streamMin || fi.Size() > readall.RunLimit {
		return nil, false, nil
	}
	var run Run
	keys := map[string]bool{}
	if decodeStream(bufio.NewReaderSize(f, 1<<20), &run, keys) != nil {
		return nil, false, nil
	}
	if asImport && (keys["benchmarks"] || keys["results"] || !keys["schema"]) {
		return nil, false, nil
	}
	r, err = check(&run, name)
	return r, true, err
}

// check is Decode's check of a decoded run.
func check(r *Run, path string) (*Run, error) {
	if r.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, want %q", path, r.Schema, Schema)
	}
	if err := r.CheckValues(); err != nil {
		return nil, fmt.Errorf("%s: corrupt run file: %w", path, err)
	}
	if r.FinishedAt.IsZero() {
		r.Partial = true
	}
	inertNames(r)
	return r, nil
}

// importPytest reads the pytest-benchmark JSON at path as a stream (readPytest); done is false
// when, with sniff (--format auto), the file is not pytest-benchmark's: it does not start with
// '{', or its first deciding key is another tool's. The caller then reads it otherwise.
func importPytest(path, name, id string, at time.Time, sniff bool) (r *Run, done bool, err error) {
	f, err := readall.Open(path)
	if err != nil {
		return nil, true, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() > readall.RunLimit {
		return nil, false, nil // the whole reading names the limit
	}
	br := bufio.NewReaderSize(f, 1<<20)
	if sniff {
		for {
			b, err := br.Peek(1)
			if err != nil || (b[0] != ' ' && b[0] != '\t' && b[0] != '\n' && b[0] != '\r') {
				if err != nil || b[0] != '{' {
					return nil, false, nil
				}
				break
			}
			br.Discard(1)
		}
	}
	r, err = readPytest(br, name, id, sniff)
	if errors.Is(err, errOtherTool) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	if r.StartedAt.IsZero() {
		r.StartedAt, r.FinishedAt = at, at
	}
	inertNames(r)
	return r, true, nil
}

// ImportFile reads the file at path, one file of another tool's results, as a run: format is
// "gobench", "pytest" (pytest-benchmark JSON), "hyperfine" (JSON), "inferbench" (a run.json) or
// "auto" (detected from the content). name is the file's name for messages; id, bench and at are
// the run id, the benchmark name hyperfine results lack, and the time of results that do not
// carry their own. The file is read through readall (a regular file, at most 4 GiB); pytest-benchmark JSON is decoded as a stream, a benchmark at a time (importPytest), and
// a large run.json too (loadStream).
func ImportFile(path, name, format, id, bench string, at time.Time) (*Run, error) {
	if format == "pytest" || format == "auto" {
		if r, done, err := importPytest(path, name, id, at, format == "auto"); done {
			return r, err
		}
	}
	if format == "inferbench" || format == "auto" {
		if r, done, err := loadStream(path, name, format == "auto"); done {
			return r, err
		}
	}
	data, err := readall.File(path, readall.RunLimit)
	if err != nil {
		return nil, err
	}
	return importData(data, name, format, id, bench, at)
}

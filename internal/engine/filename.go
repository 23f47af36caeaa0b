package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/inferbench/inferbench/suite"
)

// maxFileBase bounds a scenario's file name (without its extension) in bytes: file systems refuse
// names over 255 bytes, and an extension, a suffix and a profile's file inside a folder of this
// name must still fit.
const maxFileBase = 120

// scenarioFileBase is the scenario's name as a file name without extension, shared by its output
// log, request log, server log and profile folder (see fileBase).
func scenarioFileBase(sc *suite.Scenario) string { return fileBase(sc.ID()) }

// fileBase makes a scenario ID a file name that is safe on every platform and never shared by two
// scenarios. "/" becomes "__" and every byte outside [A-Za-z0-9._=,+-] becomes "_"; the result is
// at most maxFileBase bytes. When that name does not give the ID back unambiguously (a byte was
// replaced, the ID holds "__" or an upper-case letter, which case-insensitive file systems such
// as macOS's and Windows' fold, or the name was cut), it ends with "~" and eight hex digits of the
// ID's SHA-256. So the common names stay readable (llm-mock__variant=eager__batch_size=1) and
// two scenarios that print alike as files (a/b and a__b, m=A and m=a, two long names with one
// prefix) write two files instead of one overwriting the other.
func fileBase(id string) string {
	var b strings.Builder
	lossy := strings.Contains(id, "__")
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c == '/':
			b.WriteString("__")
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c)
			lossy = true
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', strings.IndexByte("._=,+-", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('_')
			lossy = true
		}
	}
	name := b.String()
	// A name of dots alone ("." or "..") is not a file of its own.
	if strings.Trim(name, ".") == "" {
		lossy = true
	}
	const suffix = 1 + 8 // "~" and eight hex digits
	if len(name) > maxFileBase {
		name, lossy = name[:maxFileBase-suffix], true
	}
	if !lossy {
		return name
	}
	sum := sha256.Sum256([]byte(id))
	return name + "~" + hex.EncodeToString(sum[:4])
}

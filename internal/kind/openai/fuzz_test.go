package openai

import (
	"bytes"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// refEvents is the WHATWG event-stream algorithm written plainly (split into lines on CRLF, LF
// or CR, then fields), with the Scanner's one extension: an event cut off by the end of the
// stream is dispatched.
func refEvents(in []byte) []ev {
	var lines [][]byte
	for len(in) > 0 {
		i := bytes.IndexAny(in, "\r\n")
		if i < 0 {
			lines = append(lines, in)
			break
		}
		lines = append(lines, in[:i])
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
	}
	var out []ev
	var cur ev
	var data []byte
	has := false
	dispatch := func() {
		if has {
			cur.Data = string(bytes.TrimSuffix(data, []byte{'\n'}))
			out = append(out, cur)
		}
		cur, data, has = ev{}, nil, false
	}
	for _, l := range lines {
		if len(l) == 0 {
			dispatch()
			continue
		}
		if l[0] == ':' {
			continue
		}
		name, value, _ := bytes.Cut(l, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "data":
			data = append(append(data, value...), '\n')
			has = true
		case "event":
			cur.Type = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				cur.ID = string(value)
			}
		}
	}
	dispatch()
	return out
}

// FuzzScanner compares the Scanner with refEvents on arbitrary streams, read whole and byte by
// byte.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		"data: hello\n\n", "data: a\r\rdata: b\r\r", "data: a\r\n\r\ndata: b\r\n\r\n", "data: a\r\ndata: b\rdata: c\n\n",
		": ping\n\nevent: error\nid: 7\ndata: {}\n\n", "data: a\n\ndata: b", "data:  two\n\ndata\n\ndata:x\n\n",
		content("x") + usage(3, 1) + done, "\r\n\r", "event: x\n\ndata: y\r",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want := refEvents(in)
		for _, oneByte := range []bool{false, true} {
			var r = bytes.NewReader(in)
			sc := NewScanner(r)
			if oneByte {
				sc = NewScanner(iotest.OneByteReader(r))
			}
			var got []ev
			for sc.Scan() {
				e := sc.Event()
				got = append(got, ev{e.Type, e.ID, string(e.Data)})
			}
			if sc.Err() != nil {
				t.Fatalf("Err() = %v", sc.Err())
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%q (one byte at a time: %v): events (-reference +scanner):\n%s", in, oneByte, diff)
			}
		}
	})
}

package finite

import "encoding/json"

// SkipValue reads the next value of dec, token by token, holding none of it: the readers of
// other tools' large files skip what they do not keep without decoding it. The error is dec's.
func SkipValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

package selftest

import "encoding/json"

// The relay handles one result line per probe twice: init decodes each
// line the probe process prints (ReadResultsBatched) and encodes it again
// as a "result" message (Conn.Queue). Through encoding/json's reflection
// that is about 1.3 ms of init's CPU per launch. The lines the probe
// process writes (json.Encoder of a Result) have a plain shape, so a
// direct scan and a direct append handle those, and every line or result
// of any other shape goes through encoding/json as before: the fast paths
// give exactly what encoding/json gives, or decline.

// resultFields are Result's JSON names in its field order.
var resultFields = [...]string{"probe", "target", "expect", "decision", "observed", "run_id", "evidence", "detail"}

// resultField returns the index in resultFields of key and the address
// of r's field of that name, or -1 and nil.
func resultField(r *Result, key []byte) (int, *string) {
	switch string(key) {
	case "probe":
		return 0, &r.Probe
	case "target":
		return 1, &r.Target
	case "expect":
		return 2, (*string)(&r.Expect)
	case "decision":
		return 3, (*string)(&r.Decision)
	case "observed":
		return 4, &r.Observed
	case "run_id":
		return 5, &r.RunID
	case "evidence":
		return 6, &r.Evidence
	case "detail":
		return 7, &r.Detail
	}
	return -1, nil
}

// plainByte is a byte that stands for itself in a JSON string both ways:
// printable ASCII other than the quote, the backslash and the three that
// encoding/json escapes for HTML (<, >, &).
func plainByte(b byte) bool {
	return b >= 0x20 && b < 0x7f && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
}

// unmarshalResult decodes line into a Result as json.Unmarshal would.
func unmarshalResult(line []byte) (Result, error) {
	if r, ok := scanResult(line); ok {
		return r, nil
	}
	var r Result
	err := json.Unmarshal(line, &r)
	return r, err
}

// scanResult decodes a line of the plain shape: one object, no
// whitespace, each member a key of Result's exactly (once) with a string
// value of plain bytes, and nothing after it. Any other line: false.
func scanResult(line []byte) (Result, bool) {
	var r Result
	if len(line) < 2 || line[0] != '{' || line[len(line)-1] != '}' {
		return r, false
	}
	var seen [len(resultFields)]bool
	i := 1
	if line[i] == '}' {
		return r, i == len(line)-1
	}
	for {
		key, next, ok := scanPlainString(line, i)
		if !ok || next >= len(line) || line[next] != ':' {
			return Result{}, false
		}
		k, field := resultField(&r, key)
		if field == nil || seen[k] {
			return Result{}, false // another key, or one twice: encoding/json's rules
		}
		seen[k] = true
		val, next, ok := scanPlainString(line, next+1)
		if !ok || next >= len(line) {
			return Result{}, false
		}
		*field = string(val)
		switch line[next] {
		case ',':
			i = next + 1
		case '}':
			return r, next == len(line)-1
		default:
			return Result{}, false
		}
	}
}

// scanPlainString reads a string of plain bytes at line[i] and returns
// its content and the index after its closing quote.
func scanPlainString(line []byte, i int) ([]byte, int, bool) {
	if i >= len(line) || line[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(line); j++ {
		switch b := line[j]; {
		case b == '"':
			return line[i+1 : j], j + 1, true
		case !plainByte(b):
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// marshalMessage encodes m as json.Marshal does.
func marshalMessage(m Message) ([]byte, error) {
	if b, ok := appendResultMessage(nil, m); ok {
		return b, nil
	}
	return json.Marshal(m)
}

// appendResultMessage appends a "result" message that carries only its
// Result, whose strings are all plain, as json.Marshal writes it; any
// other message: false.
func appendResultMessage(b []byte, m Message) ([]byte, bool) {
	if m.Type != MsgResult || m.Result == nil || m.Config != nil || m.Reason != "" || m.PID != 0 || m.Landlock != nil || m.Code != nil {
		return b, false
	}
	out, ok := appendPlainResult(append(b, `{"type":"result","result":`...), *m.Result)
	if !ok {
		return b, false
	}
	return append(out, '}'), true
}

// AppendResult appends r as JSON, exactly as json.Marshal writes it (a
// json.Encoder adds only the newline): what the probe process prints.
func AppendResult(b []byte, r Result) ([]byte, error) {
	if out, ok := appendPlainResult(b, r); ok {
		return out, nil
	}
	j, err := json.Marshal(r)
	return append(b, j...), err
}

// appendPlainResult appends r as json.Marshal writes it when all its
// strings are plain; otherwise it appends nothing and says false.
func appendPlainResult(b []byte, r Result) ([]byte, bool) {
	values := [len(resultFields)]string{r.Probe, r.Target, string(r.Expect), string(r.Decision), r.Observed, r.RunID, r.Evidence, r.Detail}
	for _, v := range values {
		for k := 0; k < len(v); k++ {
			if !plainByte(v[k]) {
				return b, false
			}
		}
	}
	b = append(b, '{')
	for k, v := range values {
		if resultFields[k] == "detail" && v == "" {
			continue // omitempty
		}
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, resultFields[k]...)
		b = append(b, `":"`...)
		b = append(b, v...)
		b = append(b, '"')
	}
	return append(b, '}'), true
}

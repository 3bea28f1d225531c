package doctor

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestWriteTextColourOnlyWhenAsked(t *testing.T) {
	rep := Evaluate(healthyFacts())
	var plain, coloured bytes.Buffer
	if err := WriteText(&plain, rep, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&coloured, rep, true); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\033[") {
		t.Error("plain text contains ANSI escapes")
	}
	if !strings.Contains(coloured.String(), statusColor[Pass]+"PASS") {
		t.Error("coloured text has no coloured PASS")
	}
}

func TestWriteJSONShape(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, Evaluate(healthyFacts())); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"checks", "layers", "residuals", "verdict"} {
		if v, ok := doc[key]; !ok || string(v) == "null" {
			t.Errorf("document lacks %q (or it is null)", key)
		}
	}
	var checks []map[string]any
	if err := json.Unmarshal(doc["checks"], &checks); err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		for _, key := range []string{"id", "status", "detail"} {
			if _, ok := c[key]; !ok {
				t.Errorf("check %v lacks %q", c["id"], key)
			}
		}
	}
}

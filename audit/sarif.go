package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
)

// SARIF 2.1.0 documents, only the parts agentbox writes.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool    sarifTool     `json:"tool"`
		Results []sarifResult `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		Version        string      `json:"version,omitempty"`
		InformationURI string      `json:"informationUri,omitempty"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string         `json:"id"`
		ShortDescription     sarifText      `json:"shortDescription"`
		FullDescription      sarifText      `json:"fullDescription"`
		Help                 sarifText      `json:"help"`
		DefaultConfiguration sarifConfig    `json:"defaultConfiguration"`
		Properties           map[string]any `json:"properties,omitempty"`
	}
	sarifConfig struct {
		Level string `json:"level"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID       string             `json:"ruleId"`
		RuleIndex    int                `json:"ruleIndex"`
		Level        string             `json:"level"`
		Message      sarifText          `json:"message"`
		Locations    []sarifLocation    `json:"locations,omitempty"`
		Suppressions []sarifSuppression `json:"suppressions,omitempty"`
		Properties   map[string]any     `json:"properties,omitempty"`
	}
	sarifLocation struct {
		PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
		LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           *sarifRegion  `json:"region,omitempty"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine int `json:"startLine"`
	}
	sarifLogical struct {
		Name string `json:"name"`
		Kind string `json:"kind,omitempty"`
	}
	sarifSuppression struct {
		Kind          string `json:"kind"`
		Justification string `json:"justification,omitempty"`
	}
)

const sarifSchema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// WriteSARIF writes the report as a SARIF 2.1.0 log with one run. Findings
// from a file carry its path (and line, for compose); accepted findings are
// written with an external suppression and its justification. version is
// agentbox's version, or "".
func WriteSARIF(w io.Writer, r Report, version string) error {
	rules, index := sarifRules()
	run := sarifRun{
		Tool:    sarifTool{Driver: sarifDriver{Name: "agentbox", Version: version, Rules: rules}},
		Results: []sarifResult{},
	}
	for _, c := range r.Containers {
		for _, f := range c.Findings {
			run.Results = append(run.Results, sarifFinding(c, f, index[f.Code]))
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sarifLog{Schema: sarifSchema, Version: "2.1.0", Runs: []sarifRun{run}}); err != nil {
		return fmt.Errorf("write SARIF: %w", err)
	}
	return nil
}

func sarifRules() ([]sarifRule, map[string]int) {
	cat := Catalog()
	rules := make([]sarifRule, 0, len(cat))
	index := make(map[string]int, len(cat))
	for i, r := range cat {
		index[r.Code] = i
		rules = append(rules, sarifRule{
			ID:                   r.Code,
			ShortDescription:     sarifText{r.Title},
			FullDescription:      sarifText{r.Title + ". " + r.Symptom + "."},
			Help:                 sarifText{"Fix: " + r.Fix + ". Proof: " + proof(r) + "."},
			DefaultConfiguration: sarifConfig{sarifLevel(r.Severity)},
			Properties:           map[string]any{"severity": string(r.Severity), "probe": r.Probe},
		})
	}
	return rules, index
}

func sarifLevel(s Severity) string {
	switch s {
	case Critical, High:
		return "error"
	case Medium:
		return "warning"
	default:
		// low and informational: below
	}
	return "note"
}

func sarifFinding(c ContainerReport, f Finding, rule int) sarifResult {
	res := sarifResult{
		RuleID: f.Code, RuleIndex: rule, Level: sarifLevel(f.Severity),
		Message: sarifText{fmt.Sprintf("%s: %s: %s. Fix: %s", c.Name, f.Subject, f.Detail, f.Fix)},
		Properties: map[string]any{
			"severity": string(f.Severity), "subject": f.Subject, "container": c.Name,
		},
	}
	if f.Unknown {
		res.Properties["unknown"] = true
	}
	if f.Evidence != "" {
		res.Properties["evidence"] = f.Evidence
	}
	if len(f.Also) > 0 {
		res.Properties["also"] = f.Also
	}
	loc := sarifLocation{LogicalLocations: []sarifLogical{{Name: c.Name, Kind: "object"}}}
	file := f.File
	if file == "" {
		file = c.File
	}
	if file != "" {
		loc.PhysicalLocation = &sarifPhysical{ArtifactLocation: sarifArtifact{URI: fileURI(file)}}
		if f.File != "" && f.Line > 0 {
			loc.PhysicalLocation.Region = &sarifRegion{StartLine: f.Line}
		}
	}
	res.Locations = []sarifLocation{loc}
	if f.Accepted {
		res.Suppressions = []sarifSuppression{{Kind: "external", Justification: f.AcceptedReason}}
	}
	return res
}

// fileURI turns a path into a URI reference: file:// for absolute paths, a
// relative reference otherwise.
func fileURI(p string) string {
	p = filepath.ToSlash(p)
	u := url.URL{Path: p}
	if strings.HasPrefix(p, "/") {
		u.Scheme = "file"
	}
	return u.String()
}

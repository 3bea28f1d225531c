package apparmor

import (
	_ "embed" // the profile template
	"fmt"
	"regexp"
	"strings"
	"sync"
	"text/template"
)

//go:generate go test -run ^TestRenderedCopy$ -update .

// DefaultName is the name of agentbox's profile; RenderedFile holds it
// rendered.
const DefaultName = "agentbox-default"

// RenderedFile is the checked-in rendering of the profile for DefaultName,
// relative to this package. A test fails when the template and it differ.
const RenderedFile = "agentbox-default"

//go:embed profile.tmpl
var profileTemplate string

// tmpl is the parsed template, parsed on first use: parsing it costs
// about half a millisecond, which every start of agentbox would pay
// (package initialisers run before main) though only a launch on an
// AppArmor host renders the profile.
var tmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("profile").Option("missingkey=error").Parse(profileTemplate))
})

var namePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`) })

// Render returns agentbox's AppArmor profile under name. The name must be
// 1 to 64 characters of lowercase letters, digits, '.', '_' and '-'.
func Render(name string) (string, error) {
	if err := validName(name); err != nil {
		return "", err
	}
	var b strings.Builder
	if err := tmpl().Execute(&b, struct{ Name string }{name}); err != nil {
		return "", fmt.Errorf("render AppArmor profile %s: %w", name, err)
	}
	return b.String(), nil
}

func validName(name string) error {
	if !namePattern().MatchString(name) {
		return fmt.Errorf("AppArmor profile name %q must match %s", name, namePattern())
	}
	return nil
}

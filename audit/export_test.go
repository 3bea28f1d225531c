package audit

// What the external tests (manifest_test.go) use of the package's own test
// helpers.
type SarifLog = sarifLog

var (
	SarifSchemaValidator = sarifSchemaValidator
	ParseFixture         = parseFixture
)

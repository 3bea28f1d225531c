//go:build !linux

package selftest

import "errors"

var errNoThreadName = errors.New("no thread names")

func setThreadName(string) error { return errNoThreadName }

func threadName() (string, error) { return "", errNoThreadName }

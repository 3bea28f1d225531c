package manifest

import "sort"

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func sortStrings(s []string) { sort.Strings(s) }

package driver

import "bytes"

// FindLeaks returns the forbidden strings (paths or names of the recording
// machine, say) that occur in a capture; empty strings are ignored.
func FindLeaks(capture []byte, forbidden []string) []string {
	var found []string
	for _, f := range forbidden {
		if f != "" && bytes.Contains(capture, []byte(f)) {
			found = append(found, f)
		}
	}
	return found
}

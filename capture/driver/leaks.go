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

// machineDirs start paths that belong to a machine rather than to a
// recording's scratch folder.
var machineDirs = []string{"/tmp/", "/home/", "/root/", "/Users/", "/var/folders/", "/work/"}

// FindForeignPaths returns the absolute paths under a machine directory
// (/tmp, /home, /root, ...) that occur in a capture outside scratch (the
// recording's own folder, e.g. /tmp/acp-capture/claude), each once, up to
// the next quote, space or backslash. A directory name inside a longer
// path (".qwen/tmp/x") is not a path of its own and does not count.
func FindForeignPaths(capture []byte, scratch string) []string {
	var found []string
	seen := map[string]bool{}
	for _, dir := range machineDirs {
		for i := 0; ; {
			j := bytes.Index(capture[i:], []byte(dir))
			if j < 0 {
				break
			}
			at := i + j
			i = at + 1
			if at > 0 && isPathByte(capture[at-1]) {
				continue
			}
			rest := capture[at:]
			if scratch != "" && bytes.HasPrefix(rest, []byte(scratch)) &&
				(len(rest) == len(scratch) || !isPathByte(rest[len(scratch)]) || rest[len(scratch)] == '/') {
				continue
			}
			end := bytes.IndexAny(rest, "\"\\ \n\t`'")
			if end < 0 {
				end = len(rest)
			}
			if p := string(rest[:end]); !seen[p] {
				seen[p] = true
				found = append(found, p)
			}
		}
	}
	return found
}

func isPathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' || c == '/'
}

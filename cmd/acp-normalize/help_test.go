package main

import (
	"io/fs"
	"strings"
	"testing"
)

// TestHelpFilesAreCommands: every help/NAME.txt is the help of a
// subcommand (helpCommand panics on a missing or malformed one), so that
// no help text is left behind when a command goes.
func TestHelpFilesAreCommands(t *testing.T) {
	app := newApp(streams{})
	files, err := fs.Glob(helpFiles, "help/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no help files embedded")
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "help/"), ".txt")
		c := app.Command(name)
		if c == nil {
			t.Errorf("%s: no command %q", f, name)
			continue
		}
		if c.Description == "" || c.Usage == "" {
			t.Errorf("%s: command %q has no usage or description", f, name)
		}
		// The command says all the file says, as written: the synopsis's
		// arguments, the usage line, the description (helpCommand's
		// parse loses nothing).
		b, err := helpFiles.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := "acp-normalize " + name + " " + c.ArgsUsage + "\n" + c.Usage + "\n\n" + c.Description + "\n"; got != string(b) {
			t.Errorf("%s: command %q says\n%s\nthe file says\n%s", f, name, got, b)
		}
	}
}

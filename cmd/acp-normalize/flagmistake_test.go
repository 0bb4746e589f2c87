package main

import (
	"errors"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestFlagMistake: the first flag mistake of a command line, said with the
// flag as the user types it, found without reading the flag package's
// messages; the command's own error when the mistake is of another kind.
func TestFlagMistake(t *testing.T) {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "record"},
		&cli.BoolFlag{Name: "record-raw"},
		&cli.DurationFlag{Name: "kill-grace", Aliases: []string{"g"}},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}},
		&cli.IntFlag{Name: "count"},
	}
	parseErr := errors.New("the command's error")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"--bogus", "x"}, "unknown flag --bogus"},
		{"unknown flag with a value", []string{"--record", "f", "--timeout-nope=1"}, "unknown flag --timeout-nope"},
		{"unknown one-letter flag", []string{"-z"}, "unknown flag -z"},
		{"a value missing", []string{"--record"}, "--record needs a value"},
		{"a one-letter flag's value missing", []string{"-o"}, "-o needs a value"},
		{"not a boolean", []string{"--record-raw=maybe"}, `--record-raw: invalid value "maybe": want true or false`},
		{"not a duration", []string{"--kill-grace", "soon"}, `--kill-grace: invalid value "soon": want a duration such as 3s or 500ms`},
		{"not a duration, by its alias", []string{"-g=soon"}, `-g: invalid value "soon": want a duration such as 3s or 500ms`},
		{"not an integer", []string{"--count", "many"}, `--count: invalid value "many": not a value of this flag's type`},
		{"the first mistake", []string{"--record-raw", "--bogus", "--count", "x"}, "unknown flag --bogus"},
		{"bad syntax is the command's", []string{"---x"}, "the command's error"},
		{"no mistake here is the command's", []string{"--record", "f"}, "the command's error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := flagMistake(tt.args, flags, parseErr).Error(); got != tt.want {
				t.Fatalf("flagMistake(%q) = %q, want %q", tt.args, got, tt.want)
			}
		})
	}
	t.Run("a bad environment variable is the command's", func(t *testing.T) {
		t.Setenv("ACPN_TEST_GRACE", "soon")
		env := []cli.Flag{&cli.DurationFlag{Name: "kill-grace", EnvVars: []string{"ACPN_TEST_GRACE"}}}
		if got := flagMistake([]string{"--kill-grace", "1s"}, env, parseErr); got != parseErr {
			t.Fatalf("flagMistake = %v, want the command's error", got)
		}
	})
}

// Package terminal makes agent- and capture-controlled text safe to
// print on a terminal: a frame, a log value or an agent's error message
// may hold escape sequences that set the window title, write the
// clipboard (OSC 52) or reorder what is shown (bidi overrides). Every
// command prints such text through Text, Line or JSON, the one escaping
// of the project.
package terminal

// Package rewritetest provides a vendor module for tests of the proxy, the
// replay driver and the renderers: it makes every kind of change a module
// can make (replace, drop, reply, emit, request), keyed by made-up test/*
// methods, so that tests can pin how each change is carried and shown
// without depending on a real vendor's rules.
package rewritetest

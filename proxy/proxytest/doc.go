// Package proxytest runs whole captures through a proxy.Router for the
// tests of vendor modules: read a capture's input records, route them as
// the live proxy would, render what each side received as replay lines,
// and collect the last subagent snapshot of each launch call.
//
// It lives beside package proxy, not in rewrite/rewritetest, because the
// proxy's own tests use rewritetest.
package proxytest

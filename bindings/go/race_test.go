//go:build race

package staunch_test

const raceEnabled = true

//go:build !linux

package exec

import osexec "os/exec"

// started is a command that is running. Outside Linux nothing traces it: its peak RSS is what
// ownPeak finds in its rusage at wait.
type started struct{ cmd *osexec.Cmd }

// start starts the command that build returns (trace has no use here).
func start(build func() *osexec.Cmd, trace bool) (*started, error) {
	cmd := build()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &started{cmd: cmd}, nil
}

// wait waits for the command to exit; peak is its own peak RSS in bytes, or 0 (ownPeak).
func (s *started) wait() (peak float64, err error) {
	err = s.cmd.Wait()
	if s.cmd.ProcessState != nil {
		peak = ownPeak(s.cmd.ProcessState)
	}
	return peak, err
}

//go:build !unix

package monitor

func reapedChildren() (maxRSS, cpu float64) { return 0, 0 }

func selfMaxRSS() float64 { return 0 }

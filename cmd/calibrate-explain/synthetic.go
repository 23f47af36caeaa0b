package main

// The synthetic Go program: twenty functions of the same cost, each a loop of its own (its own
// samples, not a shared helper's), called once per call of the benchmark.

var synthetic = [20]func(int) int{f00, f01, f02, f03, f04, f05, f06, f07, f08, f09, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19}

//go:noinline
func f00(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f01(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f02(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f03(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f04(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f05(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f06(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f07(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f08(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f09(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f10(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f11(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f12(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f13(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f14(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f15(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f16(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f17(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f18(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

//go:noinline
func f19(w int) int {
	s := 0
	for k := range w {
		s += k * k % 7
	}
	return s
}

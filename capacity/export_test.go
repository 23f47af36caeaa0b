package capacity

// EstimateOf exposes estimate to the tests of package capacity_test.
var EstimateOf = estimate

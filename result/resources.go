package result

// Metrics the resource monitors add to every scenario (docs/metrics.md, "Resources and energy").
func init() { Define(resourceInfos...) }

var resourceInfos = []Info{
	{Name: "peak_rss_mb", Unit: "MB", Better: Lower, Doc: "peak resident memory of the process tree under test in the measured window"},
	{Name: "rss_mean_mb", Unit: "MB", Better: Lower, Doc: "mean resident memory of the process tree over the samples"},
	{Name: "rss_growth_mb", Unit: "MB", Better: Lower, Signed: true, Doc: "least-squares rise of resident memory over the measured window"},
	{Name: "cpu_pct", Unit: "%", Better: Lower, Doc: "mean CPU (user+system) of the process tree, percent of one core"},
	{Name: "cpu_s", Unit: "s", Better: Lower, Doc: "CPU time (user+system) the process tree used in the measured window"},
	{Name: "io_read_mb", Unit: "MB", Better: Lower, Doc: "bytes the process tree read from storage in the measured window"},
	{Name: "io_write_mb", Unit: "MB", Better: Lower, Doc: "bytes the process tree wrote to storage in the measured window"},
	{Name: "gpu_util_pct", Unit: "%", Better: Higher, Doc: "mean GPU utilisation (percent of time a kernel ran), averaged over devices"},
	{Name: "gpu_mem_peak_mb", Unit: "MB", Better: Lower, Doc: "peak GPU memory in use (all processes), summed over devices"},
	{Name: "gpu_power_w", Unit: "W", Better: Lower, Doc: "mean GPU board power, summed over devices"},
	{Name: "gpu_temp_max_c", Unit: "°C", Better: Lower, Doc: "hottest GPU temperature seen"},
	{Name: "gpu_sm_clock_mhz", Unit: "MHz", Better: Higher, Doc: "mean SM clock, averaged over devices"},
	{Name: "gpu_energy_j", Unit: "J", Better: Lower, Doc: "GPU energy in the measured window (NVML counter, else power integrated)"},
	{Name: "cpu_energy_j", Unit: "J", Better: Lower, Doc: "CPU package energy (RAPL) in the measured window, whole sockets"},
	{Name: "dram_energy_j", Unit: "J", Better: Lower, Doc: "DRAM energy (RAPL) in the measured window"},
	{Name: "energy_j", Unit: "J", Better: Lower, Doc: "energy of every measured source (CPU package, DRAM, GPU) in the measured window"},
	{Name: "energy_per_item_j", Unit: "J", Better: Lower, Doc: "mean power (energy_j / window) divided by throughput_ips"},
	{Name: "energy_per_token_j", Unit: "J", Better: Lower, Doc: "mean power divided by output_tokens_per_s"},
	{Name: "co2e_g", Unit: "g", Better: Lower, Doc: "energy_j in kWh × PUE × grid intensity (g CO2e/kWh)"},
	{Name: "co2e_per_1k_tokens_g", Unit: "g", Better: Lower, Doc: "CO2e of 1000 output tokens"},
}

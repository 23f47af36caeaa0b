from hf_eco2ai import Eco2AICallback


def benchmark_energy_tracking_accuracy():
    """Compare against reference energy measurements."""
    callback = Eco2AICallback()
    measured_energy = callback.get_total_energy()
    return {"accuracy_error": abs(measured_energy - 2.5) / 2.5}

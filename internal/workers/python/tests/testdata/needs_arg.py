def run_needs(count):
    return count

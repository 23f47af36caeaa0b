def benchmark_tokenize():
    """Split a caption into tokens."""
    return len("a photo of a cat sitting on a mat".split() * 50)

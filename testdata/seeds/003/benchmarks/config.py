BENCHMARK_CONFIGS = {
    "small_model": {"model_name": "distilbert-base-uncased", "batch_size": 16, "max_steps": 100},
}

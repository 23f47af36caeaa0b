def assert_true(cond, msg=""):
    if not cond:
        raise AssertionError(msg)

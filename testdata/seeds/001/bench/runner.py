"""The seed's own runner; inferbench's --framework mode replaces it (not run by the tests)."""

"""Code a user would write outside the project, which tests plug into it."""

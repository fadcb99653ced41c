"""Tables, figures, claim checks and the HTML report."""

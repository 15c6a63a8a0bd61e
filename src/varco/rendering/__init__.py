"""Invoice renderings: PDF (fpdf2) for the API and downloads, HTML (Jinja2) for the control panel."""

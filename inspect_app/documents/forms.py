"""The upload on the public verify page: a PDF to compare with the document that was frozen."""
from __future__ import annotations

from flask_wtf import FlaskForm
from flask_wtf.file import FileField, FileRequired


class VerifyUploadForm(FlaskForm):
    pdf = FileField("Your copy of the PDF", validators=[FileRequired("Choose the PDF file to compare.")],
                    description="It is compared by its SHA-256 here and not kept.")

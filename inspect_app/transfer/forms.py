"""The upload forms of the import page."""
from flask_wtf import FlaskForm
from flask_wtf.file import FileField, FileRequired


class UploadForm(FlaskForm):
    file = FileField("Spreadsheet (.csv or .xlsx)", validators=[FileRequired("Choose the file to import.")])
    structures = FileField("Structures file (optional)",
                           description="Only where the structures are neither a list column nor a sheet of the "
                                       "workbook.")

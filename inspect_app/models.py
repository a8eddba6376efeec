"""Imports every domain's models so SQLAlchemy and Alembic see the whole record."""
from inspect_app.accounts.models import User  # noqa: F401
from inspect_app.audit.models import AuditEntry  # noqa: F401
from inspect_app.certifications.models import (  # noqa: F401
    MaintenanceLogEntry, NoticeToCorrect, OMCertification, OMPlan, OMReminder, ResponsibleParty,
)
from inspect_app.conditions.models import FrozenPeriod, SnowmeltDischarge  # noqa: F401
from inspect_app.completion.models import (  # noqa: F401
    CertificateOfCompletion, FinalSubmission, SuretyRelease,
)
from inspect_app.enforcement.models import NoticeOfViolation, StopWorkOrder  # noqa: F401
from inspect_app.inspections.models import CorrectiveAction, Finding, PunchListItem  # noqa: F401
from inspect_app.inspections.models import (  # noqa: F401
    ChecklistAnswer, Inspection, InspectionNotice, PipeVideo,
)
from inspect_app.mail.models import OutboundEmail  # noqa: F401
from inspect_app.permits.models import (  # noqa: F401
    Jurisdiction, Permit, PermitAssignment, StormwaterStructure,
)
from inspect_app.blobs.models import Blob, BlobUpload  # noqa: F401
from inspect_app.photos.models import Photo  # noqa: F401
from inspect_app.schedule.models import PermitObligation, PermitScheduleProblem  # noqa: F401
from inspect_app.stabilization.models import AreaStatusEvent, DisturbedArea  # noqa: F401
from inspect_app.waivers.models import Waiver  # noqa: F401
from inspect_app.weather.models import PermitStation, StormEvent, WeatherObservation  # noqa: F401
from inspect_app.documents.models import FrozenDocument  # noqa: F401
from inspect_app.idempotency import IdempotentRequest  # noqa: F401
from inspect_app.rate_limits import RateLimitCounter  # noqa: F401

"""JUnit XML for CI systems and cluster tools that read it (GitLab ``artifacts:reports:junit``,
Jenkins, GitHub test reporters, isvreporter): the one writer every command uses.

One ``<testsuite>`` per group (a node, a fleet's drift), one ``<testcase>`` per check. A ``fail``
is a ``<failure>``, a ``skip`` is ``<skipped>``, an ``error`` (the check could not be judged) is
an ``<error>``; a ``warn`` passes — it does not fail ``verify`` either — and says so in
``<system-out>``. Built with junitparser so the XML is what JUnit readers expect.

    from envcheck.junit import Case, Suite, junit_text
    text = junit_text([Suite("gpu001", [Case("gpu001", "matmul", "pass", 0.2, "fp32 ok")])])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, List, Optional

from envcheck.errors import require_extra

#: The statuses a case can have (verify's four, and ``error`` for a check that could not be judged).
STATUSES = ("pass", "fail", "skip", "warn", "error")


@dataclass(frozen=True)
class Case:
    """One ``<testcase>``: ``classname`` is the node (or group), ``name`` the check."""

    classname: str
    name: str
    status: str
    seconds: float = 0.0
    detail: str = ""
    fix: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown JUnit case status {self.status!r}; expected one of {', '.join(STATUSES)}")


@dataclass
class Suite:
    """One ``<testsuite>`` named ``name`` with its cases (and optional ``<properties>``)."""

    name: str
    cases: List[Case] = field(default_factory=list)
    properties: dict = field(default_factory=dict)
    hostname: Optional[str] = None


def _clean(text: str) -> str:
    """XML 1.0 cannot carry most control characters (a check's stderr may have them): drop them; nor
    a lone surrogate (a host id read from a report): ``?``, as in every output (:func:`fsutil.utf8_safe`)."""
    from envcheck.fsutil import utf8_safe

    return utf8_safe("".join(ch for ch in text if ch in "\t\n\r" or ord(ch) >= 0x20))


def junit_text(suites: Iterable[Suite]) -> str:
    """The JUnit XML document (``<testsuites>`` root) for ``suites``, as text."""
    require_extra("junit")
    from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

    xml = JUnitXml("envcheck")
    for s in suites:
        suite = TestSuite(_clean(s.name))
        if s.hostname:
            suite.hostname = _clean(s.hostname)
        for key, value in s.properties.items():
            suite.add_property(_clean(str(key)), _clean(str(value)))
        for c in s.cases:
            case = TestCase(_clean(c.name), classname=_clean(c.classname), time=round(float(c.seconds or 0), 3))
            message = _clean(c.detail)[:1000]
            body = _clean(c.detail + (f"\nfix: {c.fix}" if c.fix else ""))
            if c.status in ("fail", "error"):
                result = Failure(message, "fail") if c.status == "fail" else Error(message, "error")
                result.text = body
                case.result = [result]
            elif c.status == "skip":
                case.result = [Skipped(message)]
            elif c.status == "warn":
                case.system_out = _clean(f"warning: {body}")
            elif c.detail:
                case.system_out = _clean(c.detail)
            suite.add_testcase(case)
        suite.update_statistics()
        xml.add_testsuite(suite)
    xml.update_statistics()
    text = xml.tostring()
    return (text.decode("utf-8") if isinstance(text, bytes) else text) + "\n"


def write_junit(path: str | object, suites: Iterable[Suite], force: bool = False, flag: str = "--junit") -> None:
    """Write :func:`junit_text` to ``path`` atomically (never over an existing file unless ``force``).

    Raises:
        UsageError / OutputExistsError: the path cannot be written, or exists without ``force``.
    """
    from pathlib import Path

    from envcheck.render.write import write_output_file

    write_output_file(Path(str(path)), junit_text(suites), force, flag)

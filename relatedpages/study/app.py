"""The grading page of ``relatedpages study serve`` (a Flask WSGI app over the study's
SQLite file): graders give their name, then grade each query page's shuffled results
0/1/2 with the keyboard; every grade is committed when it is given, so closing the browser
loses nothing and the next visit resumes at the first unfinished page.

    GET  /                                   the grading page (static/grade.*)
    GET  /api/progress?grader=NAME           finished, total, first unfinished position
    GET  /api/query/POSITION?grader=NAME     the query page and its results (no system names)
    POST /api/grade {"grader", "result", "grade"}
"""
from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Any

from flask import Flask, Response, jsonify, request, send_from_directory
from werkzeug.exceptions import HTTPException

from relatedpages.serve.app import API_SECURITY_HEADERS, PAGE_SECURITY_HEADERS, json_body
from relatedpages.serve.app import STATIC as SERVE_STATIC
from relatedpages.study.store import StudyError, connect, grader_id, meta, progress, query_page, set_grade

STATIC = Path(__file__).resolve().parent / "static"
#: A grade is a few dozen bytes: a larger body is refused (413).
MAX_BODY_BYTES = 1 << 16


def create_app(study: Path) -> Flask:
    app = Flask("relatedpages.study", static_folder=str(STATIC), static_url_path="/static")
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    connect(study).close()  # refuses a missing study now, not at the first request

    def grader(name: Any) -> tuple[Any, int]:
        if not isinstance(name, str):
            raise StudyError("grader is required")
        connection = connect(study)
        return connection, grader_id(connection, name)

    @app.get("/")
    def page() -> Any:
        return app.send_static_file("grade.html")

    @app.get("/static/safe.js")
    def safe_js() -> Any:  # the explorer's: one home for putting crawl text in a page
        return send_from_directory(SERVE_STATIC, "safe.js")

    @app.get("/api/progress")
    def progress_of() -> Any:
        connection, who = grader(request.args.get("grader"))
        with closing(connection):
            done, total, first = progress(connection, who)
            return jsonify({"study": meta(connection)["name"], "done": done, "total": total, "next": first})

    @app.get("/api/query/<int:position>")
    def query(position: int) -> Any:
        connection, who = grader(request.args.get("grader"))
        with closing(connection):
            shown = query_page(connection, position, who)
            if shown is None:
                return jsonify({"error": f"no query page {position}", "status": 404}), 404
            done, total, _ = progress(connection, who)
            return jsonify({**shown, "done": done, "total": total})

    @app.post("/api/grade")
    def grade() -> Any:
        body = json_body(request.environ, request.is_json, MAX_BODY_BYTES)
        if not isinstance(body, dict):
            raise StudyError('expected {"grader": NAME, "result": ID, "grade": 0|1|2}')
        connection, who = grader(body.get("grader"))
        with closing(connection):
            result, value = body.get("result"), body.get("grade")
            if not isinstance(result, int) or not isinstance(value, int) or isinstance(value, bool):
                raise StudyError('expected {"grader": NAME, "result": ID, "grade": 0|1|2}')
            set_grade(connection, who, result, value)
            return jsonify({"saved": True, "result": result, "grade": value})

    @app.errorhandler(StudyError)
    def study_error(error: StudyError) -> Any:
        return jsonify({"error": str(error), "status": 400}), 400

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Any:
        return jsonify({"error": error.description, "status": error.code}), error.code or 500

    @app.after_request
    def secure(response: Response) -> Response:
        api = request.path.startswith("/api/")
        response.headers.update(API_SECURITY_HEADERS if api else PAGE_SECURITY_HEADERS)
        response.headers["Cache-Control"] = "no-store"
        return response

    return app

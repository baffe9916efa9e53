from tests.python_bugs import serialize_ast_parse

serialize_ast_parse()

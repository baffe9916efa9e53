-- agentls in Neovim (0.7 and newer): starts `agentls serve` as a language server, lets the agent
-- ask the buffer's other language servers (agent/languageRequest), shows the agent's turns in a
-- scratch buffer and asks its permission questions with vim.ui.select. See editors/nvim/README.md.
--
--   require('agentls').setup({ cmd = { 'agentls', 'serve' } })
--
-- Neovim 0.7 (Debian 12) has no vim.lsp.start: there the client is started once with
-- vim.lsp.start_client and attached to each buffer with vim.lsp.buf_attach_client. On 0.11+
-- client methods are called with ':' (client:request), before with '.'.

local M = {}

-- The LSP methods agent/languageRequest may ask for (docs/protocol.md): all are declared, and
-- each is passed to the other language servers of the document's buffer.
M.methods = {
  'textDocument/definition',
  'textDocument/typeDefinition',
  'textDocument/implementation',
  'textDocument/references',
  'textDocument/hover',
  'textDocument/documentSymbol',
  'workspace/symbol',
  'textDocument/prepareRename',
  'textDocument/rename',
  'textDocument/prepareCallHierarchy',
  'callHierarchy/incomingCalls',
  'callHierarchy/outgoingCalls',
  'textDocument/diagnostic',
}

local defaults = {
  cmd = { 'agentls', 'serve' },
  -- The workspace: the folder Neovim was started in unless given.
  root_dir = nil,
  -- Sent as initializationOptions (e.g. { agent = { model = '...' } }).
  init_options = nil,
  -- Filetypes whose buffers agentls attaches to: a list, or '*' for every file.
  filetypes = '*',
  -- How long one language server may take to answer a languageRequest (below the server's
  -- own languageTimeoutS, so that a slow server gives "nothing" rather than a timeout).
  request_timeout_ms = 10000,
  -- Open the transcript in a split when a turn starts.
  show_transcript = true,
}

local state = {
  opts = nil,
  client_id = nil,
  session_id = nil, -- the session of the last turn, where :Agent prompts next
  transcript = nil, -- the scratch buffer
}

local method_calls = vim.fn.has('nvim-0.11') == 1
local uv = vim.uv or vim.loop

-- client:name(...) on 0.11+, client.name(...) before.
local function call(client, name, ...)
  if method_calls then
    return client[name](client, ...)
  end
  return client[name](...)
end

local function all_clients()
  if vim.lsp.get_clients ~= nil then
    return vim.lsp.get_clients()
  end
  return vim.lsp.get_active_clients()
end

local function agent_client()
  return state.client_id and vim.lsp.get_client_by_id(state.client_id) or nil
end

-- ---- the transcript (a scratch buffer) ------------------------------------------------------

local function transcript()
  local buf = state.transcript
  if buf ~= nil and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, 'agentls://transcript')
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].bufhidden = 'hide'
  state.transcript = buf
  return buf
end

local function show_transcript()
  local buf = transcript()
  if vim.fn.bufwinid(buf) ~= -1 then
    return
  end
  local current = vim.api.nvim_get_current_win()
  vim.cmd('botright 12split')
  vim.api.nvim_win_set_buf(0, buf)
  vim.api.nvim_set_current_win(current)
end

-- Appends text to the transcript: `text` goes on at the end of its last line (streamed text);
-- with `new_line`, on a line of its own.
local function append(text, new_line)
  local buf = transcript()
  local count = vim.api.nvim_buf_line_count(buf)
  local last = vim.api.nvim_buf_get_lines(buf, count - 1, count, false)[1] or ''
  local lines = vim.split(text, '\n', { plain = true })
  if new_line and last ~= '' then
    table.insert(lines, 1, last)
  else
    lines[1] = last .. lines[1]
  end
  vim.api.nvim_buf_set_lines(buf, count - 1, count, false, lines)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
  end
end

-- A line of its own (a tool call, a question, the turn's end); what streams next starts below.
local function line(text)
  append(text, true)
  append('', true)
end

-- ---- permission questions -----------------------------------------------------------------

local function answer(event, decision, scope, feedback)
  local client = agent_client()
  if client == nil then
    return
  end
  call(client, 'request', 'agent/approve', {
    sessionId = event.sessionId,
    requestId = event.requestId,
    decision = decision,
    scope = scope,
    feedback = feedback,
  }, function(err)
    if err ~= nil then -- answered elsewhere or expired
      line('[approval not taken: ' .. tostring(err.message) .. ']')
    end
  end)
end

-- ask_user: the agent's question, its choices, an answer in your own words (vim.ui.input), or
-- Skip. The answer goes back as agent/approve "once" with the answer in `feedback`.
local function ask_question(event)
  local input = type(event.input) == 'table' and event.input or {}
  local question = tostring(input.question or event.title)
  line('[question] ' .. question)
  local choices = {}
  for _, choice in ipairs(type(input.choices) == 'table' and input.choices or {}) do
    if type(choice) == 'string' then
      table.insert(choices, { choice, 'choice' })
    end
  end
  table.insert(choices, { 'Answer in my own words…', 'words' })
  table.insert(choices, { 'Skip', 'skip' })
  vim.ui.select(choices, {
    prompt = 'agentls asks: ' .. question,
    format_item = function(item)
      return item[1]
    end,
  }, function(choice)
    if choice == nil or choice[2] == 'skip' then
      line('[answered] Skip')
      return answer(event, 'reject', 'session')
    end
    if choice[2] == 'choice' then
      line('[answered] ' .. choice[1])
      return answer(event, 'once', 'session', choice[1])
    end
    vim.ui.input({ prompt = question .. ' ' }, function(words)
      if words == nil or vim.trim(words) == '' then
        line('[answered] Skip')
        return answer(event, 'reject', 'session')
      end
      line('[answered] ' .. words)
      answer(event, 'once', 'session', vim.trim(words))
    end)
  end)
end

local function ask_permission(event)
  if event.tool == 'ask_user' then
    return ask_question(event)
  end
  local what = event.title
  if event.tool == 'bash' and type(event.input) == 'table' and event.input.command then
    what = event.input.command
  end
  line('[asks] ' .. event.tool .. ': ' .. what)
  if type(event.diff) == 'string' and event.diff ~= '' then
    line('```diff\n' .. event.diff .. '\n```')
  end
  local choices = { { 'Allow once', 'once', 'session' } }
  if type(event.always) == 'string' then
    table.insert(choices, { event.always .. ' (this session)', 'always', 'session' })
    table.insert(choices, { event.always .. ' (this project)', 'always', 'project' })
  end
  table.insert(choices, { 'Reject', 'reject', 'session' })
  vim.ui.select(choices, {
    prompt = 'agentls wants to run ' .. event.tool .. ': ' .. what,
    format_item = function(item)
      return item[1]
    end,
  }, function(choice)
    -- Dismissed: reject, as the panel's Escape does.
    choice = choice or choices[#choices]
    line('[answered] ' .. choice[1])
    answer(event, choice[2], choice[3])
  end)
end

-- ---- agent/event ----------------------------------------------------------------------------

local function on_event(_, event)
  if type(event) ~= 'table' then
    return
  end
  local kind = event.type
  if event.sessionId ~= nil then
    state.session_id = event.sessionId
  end
  if kind == 'turn-start' then
    if state.opts.show_transcript then
      show_transcript()
    end
    line('## > ' .. (vim.split(event.prompt or '', '\n', { plain = true })[1] or ''))
  elseif kind == 'text-delta' then
    append(event.delta or '')
  elseif kind == 'tool-call' then
    line('[' .. event.tool .. '] ' .. (event.title or ''))
  elseif kind == 'tool-result' and event.isError then
    line('[' .. event.tool .. ' failed] ' .. vim.split(event.output or '', '\n')[1])
  elseif kind == 'permission-request' then
    ask_permission(event)
  elseif kind == 'error' then
    line('[error] ' .. (event.message or ''))
  elseif kind == 'turn-end' then
    line('[' .. (event.finishReason or 'done') .. ']')
  end
end

-- ---- agent/languageRequest: the buffer's other language servers answer ---------------------

local function document_uri(params)
  if type(params.textDocument) == 'table' then
    return params.textDocument.uri
  end
  if type(params.item) == 'table' then -- callHierarchy/incomingCalls, outgoingCalls
    return params.item.uri
  end
  return nil
end

local function nothing(result)
  return result == nil or result == vim.NIL or (type(result) == 'table' and next(result) == nil)
end

-- The language servers other than agentls, attached to the buffer (any buffer when nil), each
-- waited for until initialized.
local function others(bufnr, self_id, deadline)
  local found = {}
  for _, client in ipairs(all_clients()) do
    if client.id ~= self_id and client.name ~= 'agentls'
      and (bufnr == nil or vim.lsp.buf_is_attached(bufnr, client.id)) then
      vim.wait(math.max(0, deadline - uv.now()), function()
        return client.initialized == true or call(client, 'is_stopped')
      end, 10)
      if client.initialized == true then
        table.insert(found, client)
      end
    end
  end
  return found
end

local function ask(client, method, params, bufnr, deadline)
  local done, err, result = false, nil, nil
  local sent, request_id = call(client, 'request', method, params, function(e, r)
    done, err, result = true, e, r
  end, bufnr)
  if not sent then
    return nil
  end
  if not vim.wait(math.max(0, deadline - uv.now()), function() return done end, 10) then
    pcall(call, client, 'cancel_request', request_id)
    return nil
  end
  if err ~= nil then
    return nil
  end
  return result
end

-- The diagnostics other clients pushed for the buffer, as a pull report (what VS Code's
-- languages.getDiagnostics gives): used when no server answers textDocument/diagnostic.
local function pushed_diagnostics(bufnr, self_id)
  local own = vim.lsp.diagnostic.get_namespace(self_id)
  local function position(row, byte) -- Neovim's byte column to the LSP's UTF-16 one
    local text = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
    local _, utf16 = vim.str_utfindex(text, math.min(byte, #text))
    return { line = row, character = utf16 }
  end
  local items = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.namespace ~= own then
      table.insert(items, {
        range = {
          start = position(d.lnum, d.col),
          ['end'] = position(d.end_lnum or d.lnum, d.end_col or d.col),
        },
        severity = d.severity,
        message = d.message,
        source = d.source,
        code = d.code,
      })
    end
  end
  return { kind = 'full', items = items }
end

-- Loads a document's buffer so that its FileType autocommands attach the user's language
-- servers. Loading fires them, except where autocommands do not nest (the request handled while
-- another autocommand runs, e.g. a script's VimEnter): then the filetype is matched and FileType
-- fired here.
local function load(bufnr)
  if vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  local fired = false
  local id = vim.api.nvim_create_autocmd('FileType', {
    buffer = bufnr,
    callback = function()
      fired = true
    end,
  })
  vim.fn.bufload(bufnr)
  if not fired and vim.bo[bufnr].filetype == '' then
    local ok, filetype = pcall(vim.filetype.match, { buf = bufnr }) -- 0.8+
    if ok and filetype ~= nil then
      vim.bo[bufnr].filetype = filetype
    elseif not ok then
      pcall(vim.filetype.match, vim.api.nvim_buf_get_name(bufnr), bufnr) -- 0.7: sets it
    end
  end
  if not fired and vim.bo[bufnr].filetype ~= '' then
    vim.api.nvim_exec_autocmds('FileType', { buffer = bufnr, modeline = false })
  end
  pcall(vim.api.nvim_del_autocmd, id)
end

-- Handler of the server's agent/languageRequest {method, params}: the first non-empty answer
-- of the document buffer's other clients (the buffer loaded first, so that they attach), else
-- null. Synchronous, as Neovim's server-request handlers are; vim.wait keeps the loop running.
function M.language_request(_, request, ctx)
  local method = type(request) == 'table' and request.method or nil
  if not vim.tbl_contains(M.methods, method) then
    return nil, vim.lsp.rpc.rpc_response_error(
      vim.lsp.protocol.ErrorCodes.InvalidParams, 'method: not one agentls asks for'
    )
  end
  local params = type(request.params) == 'table' and request.params or {}
  local deadline = uv.now() + state.opts.request_timeout_ms
  local bufnr = nil
  local uri = document_uri(params)
  if uri ~= nil then
    bufnr = vim.uri_to_bufnr(uri)
    load(bufnr)
  end
  local self_id = ctx and ctx.client_id or state.client_id
  for _, client in ipairs(others(bufnr, self_id, deadline)) do
    if call(client, 'supports_method', method) then
      local result = ask(client, method, params, bufnr, deadline)
      if not nothing(result) then
        return result
      end
    end
  end
  if method == 'textDocument/diagnostic' and bufnr ~= nil then
    return pushed_diagnostics(bufnr, self_id)
  end
  return vim.NIL
end

-- ---- the client -----------------------------------------------------------------------------

local function config()
  local opts = state.opts
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.experimental = vim.tbl_extend('force', capabilities.experimental or {}, {
    agent = { approvals = true, languageRequests = M.methods },
  })
  return {
    name = 'agentls',
    cmd = opts.cmd,
    root_dir = opts.root_dir or vim.fn.getcwd(),
    init_options = opts.init_options,
    capabilities = capabilities,
    handlers = {
      ['agent/event'] = on_event,
      ['agent/languageRequest'] = M.language_request,
    },
  }
end

-- Attaches agentls to a buffer (a file buffer; others are left alone), starting it first.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if vim.bo[bufnr].buftype ~= ''
    or vim.api.nvim_buf_get_name(bufnr) == '' then
    return nil
  end
  if vim.lsp.start ~= nil then
    state.client_id = vim.lsp.start(config(), { bufnr = bufnr })
  else
    if state.client_id == nil or vim.lsp.client_is_stopped(state.client_id) then
      state.client_id = vim.lsp.start_client(config())
    end
    if state.client_id ~= nil then
      vim.lsp.buf_attach_client(bufnr, state.client_id)
    end
  end
  return state.client_id
end

-- The session the next prompt goes to: the last turn's, else a new one.
local function with_session(client, then_)
  if state.session_id ~= nil then
    return then_(state.session_id)
  end
  call(client, 'request', 'agent/newSession', { title = 'neovim' }, function(err, result)
    if err ~= nil then
      vim.notify('agentls: ' .. tostring(err.message), vim.log.levels.ERROR)
      return
    end
    state.session_id = result.sessionId
    then_(result.sessionId)
  end)
end

-- :[range]Agent {prompt}: the prompt in the current session, this file (the range's lines
-- when given) attached.
function M.prompt(text, bufnr, first_line, last_line)
  local client = agent_client()
  if client == nil then
    vim.notify('agentls is not running for this buffer', vim.log.levels.WARN)
    return
  end
  local ref = { uri = vim.uri_from_bufnr(bufnr) }
  if first_line ~= nil then
    ref.range = {
      start = { line = first_line - 1, character = 0 },
      ['end'] = { line = last_line, character = 0 },
    }
  end
  with_session(client, function(session_id)
    call(client, 'request', 'agent/prompt', {
      sessionId = session_id, text = text, context = { ref },
    }, function(err)
      if err ~= nil then
        vim.notify('agentls: ' .. tostring(err.message), vim.log.levels.ERROR)
      end
    end)
  end)
end

function M.cancel()
  local client = agent_client()
  if client ~= nil and state.session_id ~= nil then
    call(client, 'request', 'agent/cancel', { sessionId = state.session_id }, function() end)
  end
end

-- The transcript buffer (created when needed), e.g. for tests or a custom layout.
function M.transcript()
  return transcript()
end

function M.setup(opts)
  state.opts = vim.tbl_extend('force', defaults, opts or {})
  local group = vim.api.nvim_create_augroup('agentls', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = state.opts.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  vim.api.nvim_create_user_command('Agent', function(args)
    local bufnr = vim.api.nvim_get_current_buf()
    if args.range > 0 then
      M.prompt(args.args, bufnr, args.line1, args.line2)
    else
      M.prompt(args.args, bufnr)
    end
  end, { nargs = '+', range = true, desc = 'Prompt the agent (the file, or the range, attached)' })
  vim.api.nvim_create_user_command('AgentCancel', M.cancel, { desc = "Cancel the agent's turn" })
  vim.api.nvim_create_user_command('AgentTranscript', show_transcript, {
    desc = "Show the agent's transcript",
  })
  -- Buffers already open (setup run after the first file was loaded).
  local filetypes = state.opts.filetypes
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    local filetype = vim.bo[bufnr].filetype
    if vim.api.nvim_buf_is_loaded(bufnr) and filetype ~= ''
      and (filetypes == '*' or vim.tbl_contains(filetypes, filetype)) then
      M.attach(bufnr)
    end
  end
end

return M

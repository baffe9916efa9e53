-- Headless Neovim with the shipped module (editors/nvim) and a second language server
-- (jedi-language-server), driven by tests/e2e/test_neovim_language.py.
--
-- Opens shapes.py, where FileType python starts jedi (as a user's config would) and the module
-- attaches agentls (the agent's references of use_a.py then load that file, and jedi attaches
-- there too); runs the code action "Ask agent about this" the way a user picks it
-- (vim.lsp.buf.code_action, vim.ui.select answered by title); waits until the transcript shows
-- the turn's end; a second turn from :Agent whose write asks (vim.ui.select answers); the
-- module's textDocument/diagnostic answer for broken.py; writes what it saw as JSON to
-- $AGENTLS_E2E_RESULT and quits. Each wait is bounded.
--
-- Environment: AGENTLS_E2E_RESULT, AGENTLS_E2E_WORKSPACE, AGENTLS_E2E_SERVER_CMD (JSON list),
-- AGENTLS_E2E_JEDI_CMD (JSON list), AGENTLS_E2E_MODULE (editors/nvim), AGENTLS_E2E_TIMEOUT_MS.

local function getenv(name)
  local value = os.getenv(name)
  if value == nil or value == '' then
    error(name .. ' is not set')
  end
  return value
end

local RESULT = getenv('AGENTLS_E2E_RESULT')
local result = {
  ok = false,
  stage = 'start',
  language_requests = {}, -- what the module answered to agent/languageRequest
  jedi_requests = {}, -- the methods jedi was asked
  code_actions = {},
  questions = {}, -- the permission questions vim.ui.select was given
  nvim_version = tostring(vim.version().major) .. '.' .. tostring(vim.version().minor),
}

local function write_result()
  local ok, encoded = pcall(vim.fn.json_encode, result)
  if not ok then
    encoded = vim.fn.json_encode({
      ok = false,
      stage = result.stage,
      error = tostring(result.error) .. ' (and the result did not encode: ' .. tostring(encoded) .. ')',
      lsp_log = result.lsp_log,
    })
  end
  vim.fn.writefile({ encoded }, RESULT)
end

local method_calls = vim.fn.has('nvim-0.11') == 1

local function main()
  local workspace = getenv('AGENTLS_E2E_WORKSPACE')
  local timeout = tonumber(os.getenv('AGENTLS_E2E_TIMEOUT_MS') or '60000')
  vim.lsp.set_log_level('debug')
  result.lsp_log = vim.lsp.get_log_path()
  vim.opt.runtimepath:prepend(getenv('AGENTLS_E2E_MODULE'))

  result.stage = 'load the module'
  local agentls = require('agentls')
  local answer = agentls.language_request
  agentls.language_request = function(err, request, ctx)
    local res, res_err = answer(err, request, ctx)
    table.insert(result.language_requests, {
      method = request.method,
      params = request.params,
      result = res ~= vim.NIL and res or nil,
    })
    return res, res_err
  end

  -- The user's own language server for Python, started the usual way.
  local jedi = { name = 'jedi', cmd = vim.fn.json_decode(getenv('AGENTLS_E2E_JEDI_CMD')),
    root_dir = workspace }
  jedi.on_init = function(client)
    local request = client.request
    client.request = function(...)
      local args = { ... }
      table.insert(result.jedi_requests, method_calls and args[2] or args[1])
      return request(...)
    end
  end
  local jedi_id
  vim.api.nvim_create_autocmd('FileType', {
    pattern = 'python',
    callback = function(args)
      if vim.lsp.start ~= nil then
        jedi_id = vim.lsp.start(jedi, { bufnr = args.buf })
      else
        jedi_id = jedi_id or vim.lsp.start_client(jedi)
        vim.lsp.buf_attach_client(args.buf, jedi_id)
      end
    end,
  })

  agentls.setup({
    cmd = vim.fn.json_decode(getenv('AGENTLS_E2E_SERVER_CMD')),
    root_dir = workspace,
    init_options = { agent = { permissions = { ['*'] = 'allow', write = 'ask' } } },
  })

  result.stage = 'open shapes.py'
  vim.cmd('edit ' .. vim.fn.fnameescape(workspace .. '/shapes.py'))
  local bufnr = vim.api.nvim_get_current_buf()
  local function ready(name)
    local attached = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr })
      or vim.lsp.buf_get_clients(bufnr)
    for _, client in pairs(attached) do
      if client.name == name and client.initialized then
        return true
      end
    end
    return false
  end
  result.stage = 'start agentls and jedi'
  if not vim.wait(timeout, function() return ready('agentls') and ready('jedi') end, 20) then
    error('agentls and jedi did not both start within ' .. timeout .. ' ms')
  end

  result.stage = 'code action'
  vim.fn.search('def area')
  local picked = false
  vim.ui.select = function(items, opts, on_choice)
    if opts.kind == 'codeaction' then
      for _, item in ipairs(items) do
        local action = item.action or item[2] -- {action, ctx} on 0.10+, {client_id, action} before
        table.insert(result.code_actions, action.title)
        if action.title == 'Ask agent about this' then
          picked = true
          return on_choice(item)
        end
      end
      return on_choice(nil)
    end
    -- A permission question of the module: answered "Allow once"; the agent's question
    -- (ask_user): answered with its choice "hi".
    local choices = vim.tbl_map(opts.format_item, items)
    table.insert(result.questions, { prompt = opts.prompt, choices = choices })
    for i, label in ipairs(choices) do
      if label == 'Allow once' or label == 'hi' then
        return on_choice(items[i])
      end
    end
    return on_choice(nil)
  end
  vim.lsp.buf.code_action()
  if not vim.wait(timeout, function() return picked end, 20) then
    error('no "Ask agent about this" code action within ' .. timeout .. ' ms')
  end

  result.stage = 'the turn'
  local transcript = agentls.transcript()
  local function lines()
    return vim.api.nvim_buf_get_lines(transcript, 0, -1, false)
  end
  if not vim.wait(timeout, function() return vim.tbl_contains(lines(), '[end_turn]') end, 20) then
    result.transcript = lines()
    error('the transcript shows no end of the turn within ' .. timeout .. ' ms')
  end
  result.transcript_shown = vim.fn.bufwinid(transcript) ~= -1
  -- The buffers loaded since, and whether jedi attached to them.
  result.buffers = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if buf ~= bufnr and buf ~= transcript and vim.api.nvim_buf_is_loaded(buf) then
      table.insert(result.buffers, {
        name = vim.api.nvim_buf_get_name(buf),
        listed = vim.bo[buf].buflisted,
        jedi = jedi_id ~= nil and vim.lsp.buf_is_attached(buf, jedi_id),
      })
    end
  end

  -- A second turn from :Agent in the same session, whose write asks: vim.ui.select answers.
  result.stage = ':Agent'
  vim.cmd('Agent Write hello.txt')
  local function ends()
    return #vim.tbl_filter(function(l) return l == '[end_turn]' end, lines())
  end
  if not vim.wait(timeout, function() return ends() == 2 end, 20) then
    result.transcript = lines()
    error('the second turn did not end within ' .. timeout .. ' ms')
  end
  result.transcript = lines()

  -- textDocument/diagnostic, which jedi does not answer: what jedi pushed, as a pull report.
  result.stage = 'diagnostics'
  vim.cmd('edit ' .. vim.fn.fnameescape(workspace .. '/broken.py'))
  local broken = vim.api.nvim_get_current_buf()
  if not vim.wait(timeout, function() return #vim.diagnostic.get(broken) > 0 end, 20) then
    error('jedi pushed no diagnostics for broken.py within ' .. timeout .. ' ms')
  end
  local agentls_client
  for _, client in ipairs(vim.lsp.get_active_clients()) do
    if client.name == 'agentls' then
      agentls_client = client
    end
  end
  result.pulled = agentls.language_request(nil, {
    method = 'textDocument/diagnostic',
    params = { textDocument = { uri = vim.uri_from_bufnr(broken) } },
  }, { client_id = agentls_client.id })

  result.stage = 'done'
  result.ok = true
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  nested = true, -- :edit inside fires FileType, where the language servers start
  callback = function()
    local ok, err = xpcall(main, debug.traceback)
    if not ok then
      result.error = err
    end
    local got, messages = pcall(vim.api.nvim_exec, 'messages', true)
    result.messages = got and messages or nil
    write_result()
    for _, client in ipairs(vim.lsp.get_active_clients()) do
      if method_calls then client:stop() else client.stop() end
    end
    vim.wait(5000, function() return #vim.lsp.get_active_clients() == 0 end, 20)
    vim.cmd(ok and 'qa!' or 'cquit 1')
  end,
})

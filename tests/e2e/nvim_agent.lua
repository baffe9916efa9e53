-- Headless Neovim drives `agentls serve` with its built-in LSP client (tests/e2e/test_neovim.py).
--
-- Opens calc.py, starts the server for that buffer, sends agent/newSession and agent/prompt, waits
-- for the answer, then writes what it saw (the buffer's lines, the events, any error) as JSON to
-- $AGENTLS_E2E_RESULT and quits. Every wait is bounded. Works with Neovim 0.7 (Debian 12:
-- vim.lsp.start_client + buf_attach_client) and newer (vim.lsp.start, client:request on 0.11+).
--
-- Environment: AGENTLS_E2E_RESULT (output file), AGENTLS_E2E_WORKSPACE (folder with calc.py),
-- AGENTLS_E2E_SERVER_CMD (JSON list), AGENTLS_E2E_TIMEOUT_MS (per wait, default 60000).

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
  events = {},
  apply_edits = {},
  nvim_version = tostring(vim.version().major) .. '.' .. tostring(vim.version().minor)
    .. '.' .. tostring(vim.version().patch),
}

local function write_result()
  local ok, encoded = pcall(vim.fn.json_encode, result)
  if not ok then
    -- Something in the recorded data does not encode: keep the essentials.
    encoded = vim.fn.json_encode({
      ok = false,
      stage = result.stage,
      error = tostring(result.error) .. ' (and the result did not encode: ' .. tostring(encoded) .. ')',
      buffer_lines = result.buffer_lines,
      lsp_log = result.lsp_log,
      nvim_version = result.nvim_version,
    })
  end
  vim.fn.writefile({ encoded }, RESULT)
end

local new_api = vim.fn.has('nvim-0.11') == 1 -- client:request / client:stop (method calls)

local function call(client, name, ...)
  if new_api then
    return client[name](client, ...)
  end
  return client[name](...)
end

local function main()
  local workspace = getenv('AGENTLS_E2E_WORKSPACE')
  local cmd = vim.fn.json_decode(getenv('AGENTLS_E2E_SERVER_CMD'))
  local timeout = tonumber(os.getenv('AGENTLS_E2E_TIMEOUT_MS') or '60000')

  vim.lsp.set_log_level('debug')
  result.lsp_log = vim.lsp.get_log_path()

  result.stage = 'open calc.py'
  vim.cmd('edit ' .. vim.fn.fnameescape(workspace .. '/calc.py'))
  local bufnr = vim.api.nvim_get_current_buf()
  result.buffer_lines_before = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)

  local initialized = false
  local config = {
    name = 'agentls',
    cmd = cmd,
    root_dir = workspace,
    init_options = {
      agent = { model = 'scripted:demo', permissions = { ['*'] = 'allow' } },
    },
    handlers = {
      ['agent/event'] = function(_, params)
        table.insert(result.events, params)
      end,
      ['workspace/applyEdit'] = function(err, params, ctx, cfg)
        table.insert(result.apply_edits, params)
        return vim.lsp.handlers['workspace/applyEdit'](err, params, ctx, cfg)
      end,
    },
    on_init = function()
      initialized = true
    end,
    on_exit = function(code, signal)
      result.server_exit = { code = code, signal = signal }
    end,
  }

  result.stage = 'start the language server'
  local client_id
  if vim.lsp.start ~= nil then
    client_id = vim.lsp.start(config, { bufnr = bufnr })
  else
    client_id = vim.lsp.start_client(config)
    if client_id ~= nil then
      vim.lsp.buf_attach_client(bufnr, client_id)
    end
  end
  if client_id == nil then
    error('the LSP client did not start')
  end
  local function server_gone()
    return result.server_exit ~= nil
  end
  if not vim.wait(timeout, function() return initialized or server_gone() end, 20) then
    error('no initialize answer within ' .. timeout .. ' ms')
  end
  if not initialized then
    error('the language server exited before answering initialize')
  end
  local client = vim.lsp.get_client_by_id(client_id)
  result.server_capabilities = client.server_capabilities or client.resolved_capabilities

  local function request(method, params)
    result.stage = method
    local done, answer_err, answer = false, nil, nil
    local sent = call(client, 'request', method, params, function(err, res)
      done, answer_err, answer = true, err, res
    end, bufnr)
    if not sent then
      error(method .. ': the request could not be sent (server gone?)')
    end
    if not vim.wait(timeout, function() return done or server_gone() end, 20) then
      error(method .. ': no answer within ' .. timeout .. ' ms')
    end
    if not done then
      error(method .. ': the language server exited before answering')
    end
    if answer_err ~= nil then
      error(method .. ' failed: ' .. vim.inspect(answer_err))
    end
    return answer
  end

  local session = request('agent/newSession', { title = 'neovim e2e' })
  result.session_id = session.sessionId
  result.prompt_result = request('agent/prompt', {
    sessionId = session.sessionId,
    text = 'Fix the failing test.',
  })

  result.stage = 'read the buffer'
  result.buffer_lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  result.buffer_modified = vim.bo[bufnr].modified
  result.buffer_name = vim.api.nvim_buf_get_name(bufnr)

  result.stage = 'stop the language server'
  call(client, 'stop')
  vim.wait(10000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
  result.stage = 'done'
  result.ok = true
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  callback = function()
    local ok, err = xpcall(main, debug.traceback)
    if not ok then
      result.error = err
    end
    local got, messages = pcall(vim.api.nvim_exec, 'messages', true)
    result.messages = got and messages or nil
    write_result()
    vim.cmd(ok and 'qa!' or 'cquit 1')
  end,
})

-- Headless Neovim with the shipped module (editors/nvim) reviews a two-hunk proposal in the file's
-- own buffer (tests/e2e/test_neovim_review.py).
--
-- Opens calc.py, sets the module up with the scripted model (scenario e2e), prompts with :Agent;
-- the agent's edit asks, and vim.ui.select answers "Review hunk by hunk"; the script records the
-- marks drawn in the buffer, then types the module's keys as a user does: keep the hunk under the
-- cursor, ]h, drop that one. Waits for the turn's end and writes what it saw as JSON to
-- $AGENTLS_E2E_RESULT. Each wait is bounded.
--
-- Environment: AGENTLS_E2E_RESULT, AGENTLS_E2E_WORKSPACE, AGENTLS_E2E_SERVER_CMD (JSON list),
-- AGENTLS_E2E_MODULE (editors/nvim), AGENTLS_E2E_TIMEOUT_MS.

local function getenv(name)
  local value = os.getenv(name)
  if value == nil or value == '' then
    error(name .. ' is not set')
  end
  return value
end

local RESULT = getenv('AGENTLS_E2E_RESULT')
local result = { ok = false, stage = 'start', questions = {}, cursor = {}, states = {} }

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

-- Types keys as the user does (mappings apply), and runs them now.
local function type_keys(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'mx', false)
end

local function main()
  local workspace = getenv('AGENTLS_E2E_WORKSPACE')
  local timeout = tonumber(os.getenv('AGENTLS_E2E_TIMEOUT_MS') or '60000')
  vim.lsp.set_log_level('debug')
  result.lsp_log = vim.lsp.get_log_path()
  vim.opt.runtimepath:prepend(getenv('AGENTLS_E2E_MODULE'))

  result.stage = 'load the module'
  local agentls = require('agentls')
  local review = require('agentls.review')
  agentls.setup({
    cmd = vim.fn.json_decode(getenv('AGENTLS_E2E_SERVER_CMD')),
    root_dir = workspace,
    init_options = { agent = { model = 'scripted:e2e' } },
  })

  result.stage = 'open calc.py'
  vim.cmd('edit ' .. vim.fn.fnameescape(workspace .. '/calc.py'))
  local bufnr = vim.api.nvim_get_current_buf()
  local function ready()
    local attached = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr })
      or vim.lsp.buf_get_clients(bufnr)
    for _, client in pairs(attached) do
      if client.name == 'agentls' and client.initialized then
        return true
      end
    end
    return false
  end
  if not vim.wait(timeout, ready, 20) then
    error('agentls did not start within ' .. timeout .. ' ms')
  end

  -- The edit's permission question: the user picks the review in the file.
  vim.ui.select = function(items, opts, on_choice)
    local choices = vim.tbl_map(opts.format_item, items)
    table.insert(result.questions, { prompt = opts.prompt, choices = choices })
    for i, label in ipairs(choices) do
      if vim.startswith(label, 'Review hunk by hunk') then
        return on_choice(items[i])
      end
    end
    return on_choice(nil)
  end

  result.stage = 'the proposal'
  vim.cmd('Agent Reword the docstrings of mean and median.')
  if not vim.wait(timeout, function() return #result.questions > 0 end, 20) then
    error('no permission question within ' .. timeout .. ' ms')
  end
  result.hunks_before = review.hunks(bufnr)
  result.marks_before = vim.api.nvim_buf_get_extmarks(bufnr, review.ns, 0, -1, { details = true })
  result.current_buffer_is_calc = vim.api.nvim_get_current_buf() == bufnr

  result.stage = 'decide the hunks'
  table.insert(result.cursor, vim.api.nvim_win_get_cursor(0)[1])
  type_keys('<localleader>y') -- keep the first hunk (the cursor is on it)
  table.insert(result.states, vim.tbl_map(function(h) return h.state end, review.hunks(bufnr)))
  type_keys(']h')
  table.insert(result.cursor, vim.api.nvim_win_get_cursor(0)[1])
  type_keys('<localleader>n') -- drop the second: every hunk decided, the answer goes

  result.stage = 'the turn'
  local transcript = agentls.transcript()
  local function lines()
    return vim.api.nvim_buf_get_lines(transcript, 0, -1, false)
  end
  if not vim.wait(timeout, function() return vim.tbl_contains(lines(), '[end_turn]') end, 20) then
    result.transcript = lines()
    error('the transcript shows no end of the turn within ' .. timeout .. ' ms')
  end
  result.transcript = lines()
  result.buffer_lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  result.hunks_after = review.hunks(bufnr)
  result.marks_after = #vim.api.nvim_buf_get_extmarks(bufnr, review.ns, 0, -1, {})
  result.next_key_after = vim.fn.maparg(']h', 'n')

  result.stage = 'done'
  result.ok = true
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  nested = true, -- :edit inside fires FileType, where the module attaches agentls
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
